"""take_along_dim along dim 0 of a (3, 1) MPS tensor with a (3, 1) int64 index."""
import torch

dev = "mps"
x = torch.rand(3, 1, device=dev)
idx = torch.tensor([[2], [0], [1]], device=dev)
picked = torch.take_along_dim(x, idx, 0)  # Mac aborts here
print(picked.cpu())

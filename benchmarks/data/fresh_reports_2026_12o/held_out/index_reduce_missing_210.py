"""Tensor.index_reduce with 'prod' along dim 0 on MPS tensors."""
import torch

dev = "mps"
base = torch.ones(3, 4, device=dev)
index = torch.tensor([0, 2, 2], device=dev)
src = torch.full((3, 4), 2.0, device=dev)
out = base.index_reduce(0, index, src, "prod")  # Mac raises here
print(out.cpu())

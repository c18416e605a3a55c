"""Building a sparse COO selection mask directly on MPS."""
import torch

dev = "mps"
idx = torch.tensor([[0, 2, 3], [1, 0, 4]])
vals = torch.ones(3)
mask = torch.sparse_coo_tensor(idx, vals, (4, 6), device=dev)  # Mac raises here
print(mask.to_dense().sum().item())

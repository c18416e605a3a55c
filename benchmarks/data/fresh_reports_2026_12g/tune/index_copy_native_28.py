"""Writing rows of a cache tensor in place with index_copy_ on MPS."""
import torch

dev = "mps"
cache = torch.zeros(8, 4, device=dev)
rows = torch.tensor([1, 5, 6], device=dev)
new = torch.arange(12, dtype=torch.float32, device=dev).view(3, 4)
cache.index_copy_(0, rows, new)  # Mac: runs on MPS (no error)
print(cache.sum().item())

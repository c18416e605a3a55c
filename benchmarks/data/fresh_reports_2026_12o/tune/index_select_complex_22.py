"""index_select of rows from a complex64 tensor on MPS."""
import torch

dev = "mps"
z = torch.randn(4, 3, dtype=torch.complex64).to(dev)
rows = torch.tensor([0, 2], device=dev)
picked = torch.index_select(z, 0, rows)  # Mac raises here
print(picked.cpu())

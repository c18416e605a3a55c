"""Checking MPS, then creating a tensor on it, on a Mac where MPS reports built but not available."""
import torch

dev = "mps"
print("built:", torch.backends.mps.is_built(), "available:", torch.backends.mps.is_available())
x = torch.ones(4, device=dev)  # Mac raises here
print(x.sum().item())

"""Creating a tensor on MPS on a Mac still on macOS 13 (Ventura) with a PyTorch that needs macOS 14+."""
import torch

dev = "mps"
print("mps available:", torch.backends.mps.is_available())
w = torch.zeros(3, 3, device=dev)  # Mac raises here
print(w.shape)

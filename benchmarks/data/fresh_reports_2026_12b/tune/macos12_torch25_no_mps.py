"""Moving a tensor to MPS on a Mac running macOS 12 (Monterey) with a PyTorch that needs macOS 13+."""
import torch

dev = "mps"
x = torch.randn(4, 4)
print("mps available:", torch.backends.mps.is_available())
y = x.to(dev)  # Mac raises here
print((y @ y).sum().item())

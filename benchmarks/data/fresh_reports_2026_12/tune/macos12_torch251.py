"""A training script that moves its batch to MPS, run on an older macOS."""
import torch

dev = "mps"
print("MPS available:", torch.backends.mps.is_available())
batch = torch.randn(8, 3)
batch = batch.to(dev)  # Mac raises here
print(batch.mean().item())

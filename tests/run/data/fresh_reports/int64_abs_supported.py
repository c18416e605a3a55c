"""abs of an int64 position tensor on MPS, long refused and now supported."""
import torch

dev = "mps"
pos = torch.randint(-5, 5, (1, 4096), device=dev, dtype=torch.int64)
print(torch.abs(pos).min().item() >= 0)

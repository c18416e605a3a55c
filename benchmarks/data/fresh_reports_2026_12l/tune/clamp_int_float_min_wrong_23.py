"""Clamping an integer MPS tensor with a float minimum (result promoted to float)."""
import torch

dev = "mps"
count = torch.tensor(0, device=dev)
safe = count.clamp(min=1e-1)  # Mac goes wrong here: 0.0 where the CPU gives 0.1
print(safe.item())

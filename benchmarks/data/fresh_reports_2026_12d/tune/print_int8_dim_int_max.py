"""Printing an int8 MPS tensor whose last dimension exceeds INT_MAX."""
import torch

dev = "mps"
flags = torch.ones((2, 1 << 31), dtype=torch.int8, device=dev)
print(flags)  # Mac raises here

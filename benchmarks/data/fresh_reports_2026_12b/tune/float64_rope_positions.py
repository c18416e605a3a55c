"""Rotary position frequencies for a diffusion transformer computed in float64 on the training device."""
import torch

dev = "mps"
dim, theta = 64, 10000
scale = torch.arange(0, dim, 2, dtype=torch.float64, device=dev) / dim  # Mac raises here
omega = 1.0 / (theta ** scale)
pos = torch.arange(16, device=dev)
print(torch.outer(pos.double(), omega).float().shape)

"""Rotary position frequencies of a Flux-style transformer computed directly in bfloat16 on MPS."""
import torch

dev = "mps"
dim = 64
positions = torch.arange(16, device=dev).to(torch.bfloat16)
scale = torch.arange(0, dim, 2, dtype=torch.bfloat16, device=dev) / dim  # Mac raises here
omega = 1.0 / (10000 ** scale)
angles = positions[:, None] * omega[None, :]
print(angles.float().cos().shape)

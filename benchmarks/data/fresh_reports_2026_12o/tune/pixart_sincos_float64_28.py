"""1-D sin-cos embedding of a grid of positions on MPS, with the frequency vector made in float64 on the positions' device."""
import torch

dev = "mps"
positions = torch.linspace(0, 15, 16, device=dev)
half = 32
freqs = torch.arange(half, device=positions.device, dtype=torch.float64)  # Mac raises here
freqs = 1.0 / 10000 ** (freqs / half)
angles = positions.double()[:, None] * freqs[None, :]
print(torch.cat([angles.sin(), angles.cos()], dim=1).shape)

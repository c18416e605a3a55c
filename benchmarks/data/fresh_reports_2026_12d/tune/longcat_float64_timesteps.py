"""A DiT pipeline building its sigma schedule with NumPy (float64) and moving it to MPS."""
import numpy as np
import torch

dev = "mps"
sigmas = np.linspace(1.0, 1.0 / 30, 30)
timesteps = torch.from_numpy(sigmas).to(dev)  # Mac raises here
latents = torch.randn(1, 16, 32, 32, device=dev)
print((latents * timesteps[0].float()).std().item())

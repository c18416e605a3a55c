"""Particle positions sampled with NumPy (float64 by default) handed to a simulator's MPS tensors."""
import numpy as np
import torch

dev = "mps"
rng = np.random.default_rng(0)
particles = rng.uniform(-0.5, 0.5, size=(1024, 3))  # float64 array
pos = torch.from_numpy(particles).to(dev)  # Mac raises here
vel = torch.zeros_like(pos)
pos = pos + 0.01 * vel
print(pos.shape, pos.dtype)

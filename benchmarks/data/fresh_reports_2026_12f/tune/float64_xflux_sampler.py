"""A sampler's sigma schedule built with NumPy (float64) and moved to MPS."""
import numpy as np
import torch

dev = "mps"
sigmas = torch.from_numpy(np.linspace(1.0, 0.0, 21))
sigmas = sigmas.to(dev)  # Mac raises here
latents = torch.randn(1, 16, 8, 8, device=dev)
print((latents * sigmas[0]).shape)

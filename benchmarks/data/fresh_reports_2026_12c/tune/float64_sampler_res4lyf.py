"""A diffusion sampler step whose coefficients are computed in float64 on the CPU and moved to MPS."""
import numpy as np
import torch

dev = "mps"
sigmas = torch.from_numpy(np.linspace(1.0, 0.0, 9))  # float64 from NumPy
latent = torch.randn(1, 4, 8, 8, device=dev)
h = sigmas[:-1] - sigmas[1:]
phi = torch.expm1(-h).to(dev)  # Mac raises here
latent = latent * phi[0].float()
print(latent.shape)

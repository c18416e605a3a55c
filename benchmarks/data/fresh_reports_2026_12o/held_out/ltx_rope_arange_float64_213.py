"""A video VAE's rotary inverse frequencies built with a float64 arange on the latent's device."""
import torch

dev = "mps"
latent = torch.randn(1, 8, 4, 16, 16, device=dev)
dim = 64
inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float64, device=latent.device) / dim))  # Mac raises here
print(inv_freq.float().shape)

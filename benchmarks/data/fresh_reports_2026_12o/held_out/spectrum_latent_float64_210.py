"""A sampler wrapper that upcasts the MPS video latent to float64 for its spectral bookkeeping."""
import torch

dev = "mps"
latent = torch.randn(1, 16, 8, 32, 32, device=dev)
hi_prec = latent.to(torch.float64)  # Mac raises here
print(hi_prec.dtype)

"""Scaling an MPS tensor by one entry of a noise schedule kept on the CPU (a 0-dim CPU view)."""
import torch

dev = "mps"
sigmas = torch.linspace(14.6, 0.03, 10)  # schedule stays on the CPU
latents = torch.ones(2, 4, device=dev)
scaled = latents * sigmas[3]  # Mac: wrong result here (sigmas[0] is used), no error
print(scaled[0, 0].item(), float(sigmas[3]))

"""Drawing a batch of 3-D noise volumes (a 5-D tensor) on MPS, as a volumetric diffusion sampler does."""
import torch

dev = "mps"
noise = torch.randn(2, 1, 16, 16, 16, device=dev)  # Mac (torch 2.5): wrong result here, both samples identical
print("samples identical:", torch.equal(noise[0], noise[1]))

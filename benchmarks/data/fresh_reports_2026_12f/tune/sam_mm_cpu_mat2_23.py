"""A segmentation prompt encoder whose random Fourier matrix stayed on the CPU while the points are on MPS."""
import torch

dev = "mps"
gaussian = torch.randn(2, 128)  # plain attribute, not a registered buffer: never moved
points = torch.rand(5, 2, device=dev)
proj = torch.mm(points * 2 - 1, gaussian)  # Mac raises here
print(torch.cat([proj.sin(), proj.cos()], dim=-1).shape)

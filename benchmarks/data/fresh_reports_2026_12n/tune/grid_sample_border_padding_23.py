"""Bilinear F.grid_sample with padding_mode="border" on MPS, some sampling points outside the image."""
import torch
import torch.nn.functional as F

dev = "mps"
img = torch.arange(16.0, device=dev).reshape(1, 1, 4, 4)
grid = torch.rand(1, 3, 3, 2, device=dev) * 2.4 - 1.2
out = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=False)  # Mac raises here
print(out.cpu())

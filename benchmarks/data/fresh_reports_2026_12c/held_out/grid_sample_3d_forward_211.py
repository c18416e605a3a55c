"""Warping a 3-D volume with a sampling grid (grid_sample, 5-D, bilinear) on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
vol = torch.randn(2, 16, 8, 8, 8, device=dev)
grid = torch.rand(2, 8, 8, 8, 3, device=dev) * 2 - 1
out = F.grid_sample(vol, grid, mode="bilinear", align_corners=False)
print(out.shape)

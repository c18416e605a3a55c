"""Warping a 3-D feature volume with a 5-D sampling grid (grid_sample) on MPS, as a face-animation node does."""
import torch
import torch.nn.functional as F

dev = "mps"
feat = torch.randn(1, 32, 8, 32, 32, device=dev)
grid = torch.rand(1, 8, 32, 32, 3, device=dev) * 2 - 1
warped = F.grid_sample(feat, grid, align_corners=False)  # Mac raises here
print(warped.shape)

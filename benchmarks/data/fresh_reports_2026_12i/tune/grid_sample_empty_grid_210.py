"""Sampling feature-map points with grid_sample when a frame has no keypoints (zero-size grid), on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
features = torch.randn(1, 256, 60, 80, device=dev)
grid = torch.zeros(1, 1, 0, 2, device=dev)  # no points this frame
sampled = F.grid_sample(features, grid, align_corners=True)  # Mac raises here
print(sampled.shape)

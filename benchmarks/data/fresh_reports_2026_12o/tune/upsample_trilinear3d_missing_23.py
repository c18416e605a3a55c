"""Trilinear x2 upsampling of a 3-D feature volume on MPS (a 3-D segmentation decoder step)."""
import torch
import torch.nn.functional as F

dev = "mps"
vol = torch.rand(1, 2, 8, 16, 16, device=dev)
up = F.interpolate(vol, scale_factor=2, mode="trilinear", align_corners=False)  # Mac raises here
print(up.shape)

"""Nearest-neighbour upsampling of a 3-D volume (5-D tensor) with F.interpolate, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
vol = torch.randn(1, 2, 8, 8, 8, device=dev)
up = F.interpolate(vol, scale_factor=2, mode="nearest")
print(up.shape)

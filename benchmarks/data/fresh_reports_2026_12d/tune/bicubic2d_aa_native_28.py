"""Downscaling a face crop with antialiased bicubic interpolation on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
crop = torch.rand(1, 3, 512, 512, device=dev)
small = F.interpolate(crop, size=(112, 112), mode="bicubic", antialias=True, align_corners=False)
print(small.shape, small.mean().item())

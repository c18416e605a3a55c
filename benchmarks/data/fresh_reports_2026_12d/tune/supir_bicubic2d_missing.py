"""Upscaling a low-quality image with bicubic interpolation on MPS before a restoration model."""
import torch
import torch.nn.functional as F

dev = "mps"
image = torch.rand(1, 3, 128, 128, device=dev)
upscaled = F.interpolate(image, scale_factor=2, mode="bicubic", align_corners=False)  # Mac raises here
print(upscaled.shape)

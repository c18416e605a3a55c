"""Resizing a large image tensor with antialiasing on MPS, as a vision-language transform does before tiling."""
import torch
import torch.nn.functional as F

dev = "mps"
image = torch.rand(1, 3, 1536, 2040, device=dev)
resized = F.interpolate(image, size=(560, 744), mode="bilinear", antialias=True, align_corners=False)  # Mac raises here
print(resized.shape)

"""Resizing a depth-estimation input with bicubic interpolation on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
image = torch.rand(1, 3, 240, 320, device=dev)
resized = F.interpolate(image, size=(518, 518), mode="bicubic", align_corners=False)  # Mac raises here
print(resized.shape)

"""Bicubic up-sampling of an image batch (forward and backward) on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
img = torch.rand(2, 3, 64, 64, device=dev, requires_grad=True)
up = F.interpolate(img, scale_factor=2, mode="bicubic", align_corners=False)
up.mean().backward()
print(up.shape, img.grad.shape)

"""A layout model upscaling a page crop by 2x with bicubic interpolation on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
crop = torch.rand(1, 3, 64, 96, device=dev)
big = F.interpolate(crop, scale_factor=2, mode="bicubic")  # Mac raises here
print(big.shape)

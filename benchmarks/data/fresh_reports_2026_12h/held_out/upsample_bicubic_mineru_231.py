"""Bicubic resize of a page image tensor before layout detection, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
page = torch.rand(1, 3, 800, 600, device=dev)
resized = F.interpolate(page, size=(1024, 768), mode="bicubic", align_corners=False)  # Mac raises here
print(resized.shape)

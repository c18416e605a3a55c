"""Antialiased bilinear resize of an image batch on MPS, with the CPU fallback switched on as the detector package does."""
import os

os.environ.setdefault("PYTORCH_ENABLE_MPS_FALLBACK", "1")  # the package sets this at import

import torch
import torch.nn.functional as F

dev = "mps"
images = torch.rand(2, 3, 720, 1280, device=dev)
small = F.interpolate(images, size=(560, 560), mode="bilinear", antialias=True)  # Mac warns here (CPU fallback), then completes
print(small.shape)

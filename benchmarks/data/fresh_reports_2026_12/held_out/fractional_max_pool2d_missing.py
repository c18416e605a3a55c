"""Fractional max pooling of a small feature map on MPS."""
import torch
import torch.nn as nn

dev = "mps"
pool = nn.FractionalMaxPool2d(kernel_size=2, output_ratio=0.5)
fmap = torch.randn(1, 3, 12, 12, device=dev)
print(pool(fmap).shape)  # Mac raises here

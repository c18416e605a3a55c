"""A 3-D transposed convolution (the upsampling step of a volumetric U-Net decoder) on MPS."""
import torch
import torch.nn as nn

dev = "mps"
up = nn.ConvTranspose3d(4, 2, kernel_size=2, stride=2).to(dev)
vol = torch.randn(1, 4, 6, 6, 6, device=dev)
out = up(vol)  # Mac raises here
print(out.shape)

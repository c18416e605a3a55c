"""A ConvTranspose3d upsampling layer run under float16 autocast on MPS."""
import torch
import torch.nn as nn

dev = "mps"
up = nn.ConvTranspose3d(4, 2, kernel_size=2, stride=2).to(dev)
vol = torch.randn(1, 4, 4, 4, 4, device=dev)
with torch.autocast(device_type=dev, dtype=torch.float16):
    out = up(vol)  # Mac raises here
print(out.shape)

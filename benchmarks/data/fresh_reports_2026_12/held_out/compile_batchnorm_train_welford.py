"""A train-mode BatchNorm2d over 32x32 maps compiled with torch.compile on MPS."""
import torch
import torch.nn as nn

dev = "mps"
bn = torch.compile(nn.BatchNorm2d(6).to(dev).train())
x = torch.randn(8, 6, 32, 32, device=dev)
print(bn(x).mean().item())  # Mac raises here

"""BatchNorm2d in training mode on an empty float32 batch of images on MPS."""
import torch
import torch.nn as nn

dev = "mps"
bn = nn.BatchNorm2d(5).to(dev)
x = torch.randn(0, 5, 3, 3, device=dev)
y = bn(x)  # Mac raises here
print(y.shape)

"""Backward through BatchNorm2d on a channels_last batch of images, on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
bn = nn.BatchNorm2d(3).to(dev)
x = torch.randn(4, 3, 8, 8).to(dev, memory_format=torch.channels_last).requires_grad_(True)
bn(x).pow(2).sum().backward()  # Mac: wrong result here (weight.grad, input grad), no error
print(bn.weight.grad.tolist(), x.grad.abs().max().item())

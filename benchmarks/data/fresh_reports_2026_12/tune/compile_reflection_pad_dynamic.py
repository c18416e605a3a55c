"""Reflection padding of a feature map, compiled with dynamic shapes by torch.compile on MPS."""
import torch
import torch.nn as nn

dev = "mps"
pad = nn.ReflectionPad2d(1)


@torch.compile(dynamic=True)
def padded(x):
    return pad(x)


x = torch.randn(2, 3, 10, 10, device=dev)
print(padded(x).shape)  # Mac raises here

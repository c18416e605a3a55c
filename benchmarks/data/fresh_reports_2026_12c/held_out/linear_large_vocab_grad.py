"""Gradients of a two-layer projection onto a 50257-word vocabulary, on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(123)
model = nn.Sequential(nn.Linear(130, 130, bias=False), nn.Linear(130, 50257, bias=False)).to(dev)
x = torch.randn(2, 256, 130, device=dev)
target = torch.randn(2, 256, 50257, device=dev)
(model(x) - target).sum().backward()  # Mac: wrong result here (inner layer grad differs from CPU), no error
print(model[0].weight.grad.norm().item())

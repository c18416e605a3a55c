"""Gradient checkpointing of an encoder layer on MPS, as a sentence-embedding trainer enables it."""
import torch
from torch.utils.checkpoint import checkpoint

dev = "mps"
layer = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()).to(dev)
x = torch.randn(4, 8, device=dev, requires_grad=True)
y = checkpoint(layer, x, use_reentrant=False)  # Mac raises here
y.sum().backward()
print(x.grad.shape)

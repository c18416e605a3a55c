"""A linear layer fed an empty feature axis (an optional feature group that is absent), on MPS."""
import torch
import torch.nn as nn

dev = "mps"
layer = nn.Linear(0, 5).to(dev)
x = torch.randn(3, 4, 0, device=dev)
y = layer(x)  # Mac aborts here
print(y.shape)

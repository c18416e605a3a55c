"""A video model's linear layer stored in float8 and moved to MPS before casting for compute."""
import torch
import torch.nn as nn

dev = "mps"
layer = nn.Linear(32, 32)
layer.weight.data = layer.weight.data.to(torch.float8_e4m3fn)
layer = layer.to(dev)  # Mac raises here
x = torch.randn(4, 32, device=dev)
print(torch.nn.functional.linear(x, layer.weight.float(), layer.bias).shape)

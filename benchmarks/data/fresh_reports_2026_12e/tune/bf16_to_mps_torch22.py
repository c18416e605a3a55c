"""A layer whose checkpoint weights are bfloat16, moved to MPS as a local chat app does when loading an LLM."""
import torch
import torch.nn as nn

dev = "mps"
layer = nn.Linear(64, 64).to(torch.bfloat16)
layer = layer.to(dev)  # Mac raises here
x = torch.randn(4, 64, dtype=torch.bfloat16, device=dev)
print(layer(x).float().sum().item())

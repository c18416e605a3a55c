"""Loading a bfloat16 image-model block onto MPS on an Intel Mac with an AMD GPU."""
import torch
import torch.nn as nn

dev = "mps"
block = nn.Conv2d(4, 8, 3, padding=1).to(torch.bfloat16)
block = block.to(dev)  # Mac (Intel + AMD, torch 2.2) raises here
x = torch.randn(1, 4, 16, 16, dtype=torch.bfloat16, device=dev)
print(block(x).shape)

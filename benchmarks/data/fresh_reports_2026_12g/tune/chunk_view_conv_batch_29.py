"""Batch inference where half of the channels (a chunk() view) goes through a second convolution, on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
conv1 = nn.Conv2d(3, 64, 3, padding=1)
conv2 = nn.Conv2d(32, 32, 3, padding=1)
x = torch.randn(2, 3, 32, 32)
with torch.no_grad():
    ref = conv2(conv1(x).chunk(2, dim=1)[1])
    hidden = conv1.to(dev)(x.to(dev))
    first_half, second_half = hidden.chunk(2, dim=1)  # views, not copies
    got = conv2.to(dev)(second_half).cpu()  # Mac: wrong result here for batch elements after the first, no error
print("max abs gap:", (got - ref).abs().max().item())

"""A compiled adaptive max pooling of a feature sequence to 3 bins, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"


def pool(x):
    return F.adaptive_max_pool1d(x, output_size=3)


x = torch.randn(4, 10, 8, device=dev)
eager = pool(x)
compiled = torch.compile(pool)(x)  # Mac (torch 2.10): wrong result here, no error
print("max gap to eager:", (eager - compiled).abs().max().item())

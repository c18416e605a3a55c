"""Two clamps with different scalar minimums applied to fresh MPS zeros."""
import torch

dev = "mps"
a = torch.zeros(1, device=dev)
first = a.clamp(min=0.0)
b = torch.zeros(1, device=dev)
second = b.clamp(min=1e-7)  # Mac goes wrong here: 0.0 instead of 1e-07
print(first.cpu(), second.cpu())

"""Drawing a random uint8 mask with more than INT_MAX elements directly on MPS."""
import torch

dev = "mps"
n = 2**31
mask = torch.randint(0, 10, (n,), dtype=torch.uint8, device=dev)  # Mac aborts here
print(mask.shape)

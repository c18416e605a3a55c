"""torch.cdist between 100k and 200k points of dimension 100 on MPS (an 80 GB result)."""
import torch

dev = "mps"
x = torch.rand(100_000, 100, device=dev)
y = torch.rand(200_000, 100, device=dev)
d = torch.cdist(x, y)  # Mac raises here
print(d.shape)

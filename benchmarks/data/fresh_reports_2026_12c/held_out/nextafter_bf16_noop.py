"""Stepping bfloat16 values one ULP towards +inf with torch.nextafter, on MPS."""
import torch

dev = "mps"
a = torch.tensor([1.0, 2.0, -1.0], dtype=torch.bfloat16, device=dev)
up = torch.full_like(a, float("inf"))
nxt = torch.nextafter(a, up)  # Mac: wrong result here (returns a unchanged), no error
print((nxt > a).tolist())

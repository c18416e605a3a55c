"""Bucketizing a single 0-dim value against MPS boundaries into a preallocated 0-dim output."""
import torch

dev = "mps"
boundaries = torch.tensor([0.1, 0.5, 0.9], device=dev)
out = torch.empty((), dtype=torch.int64, device=dev)
value = torch.tensor(0.7, device=dev)
torch.bucketize(value, boundaries, out=out)
print(out.item())

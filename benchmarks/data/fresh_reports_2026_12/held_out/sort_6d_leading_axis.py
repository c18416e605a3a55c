"""Sorting candidate scores along the second axis of a 6-D tensor on MPS."""
import torch

dev = "mps"
scores = torch.randn(3, 2, 2, 3, 2, 4, device=dev)
vals, idx = torch.sort(scores, dim=1)  # Mac aborts here
print(vals.shape)

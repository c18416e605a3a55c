"""A running total along the batch axis of a 5-D activation tensor on MPS."""
import torch

dev = "mps"
acts = torch.rand(3, 2, 4, 5, 6, device=dev)
running = torch.cumsum(acts, dim=0)  # Mac aborts here
print(running[-1].sum().item())

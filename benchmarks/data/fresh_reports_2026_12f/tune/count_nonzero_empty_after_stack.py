"""Counting the True entries of an empty comparison mask on MPS, after an unrelated stack op."""
import torch

dev = "mps"
x = torch.tensor([1, 2], device=dev)
pairs = torch.stack([x / 2, x / 2], dim=-1)
mask = x > torch.empty(0, 2, 2, device=dev)
n = torch.count_nonzero(mask)  # Mac (torch 2.5): wrong result here (a huge count instead of 0)
print(pairs.shape, mask.shape, n.item())

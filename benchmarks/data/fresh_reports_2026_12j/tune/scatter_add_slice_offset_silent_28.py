"""Accumulate per-row counts with scatter_add_ into rows of a preallocated table on MPS."""
import torch

dev = "mps"
table = torch.zeros(2, 4, device=dev)
idx = torch.tensor([3, 2], device=dev)
ones = torch.ones(2, device=dev)
table[0].scatter_add_(0, idx, ones)
table[1].scatter_add_(0, idx, ones)  # Mac: wrong here (row view at a non-zero offset is not updated), no error
print(table.tolist())

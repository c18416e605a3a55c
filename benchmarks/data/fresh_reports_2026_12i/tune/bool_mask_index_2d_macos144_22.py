"""Dropping padded (-100) label positions with a 2D boolean mask, on MPS."""
import torch

dev = "mps"
labels = torch.tensor([[1, 0, 2, 0, -100, -100, -100],
                       [1, 0, 2, 0, -100, -100, -100]])
mask = labels != -100
kept = labels.to(dev)[mask.to(dev)].cpu()  # Mac: wrong values here, no error
print(kept.tolist(), "expected", labels[mask].tolist())

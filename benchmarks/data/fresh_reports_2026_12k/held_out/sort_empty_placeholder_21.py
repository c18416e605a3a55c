"""Sorting the scores of an empty set of detections on MPS."""
import torch

dev = "mps"
scores = torch.zeros((0,), device=dev)
vals, order = scores.sort(descending=True)  # Mac raises here
print(vals.shape, order.shape)

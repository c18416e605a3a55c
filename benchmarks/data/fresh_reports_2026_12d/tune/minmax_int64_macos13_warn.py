"""Counting the classes predicted by a CNN from int64 argmax labels on MPS, on a Mac below macOS 13.3."""
import torch

dev = "mps"
scores = torch.randn(8, 5, device=dev)
labels = scores.argmax(dim=1)
n_classes = int(labels.max().item()) + 1  # Mac warns here (int64 min/max downcast to 32 bits), then completes
print(n_classes)

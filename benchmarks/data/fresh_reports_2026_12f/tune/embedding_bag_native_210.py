"""Summing bags of token embeddings with nn.EmbeddingBag on MPS."""
import torch
import torch.nn as nn

dev = "mps"
bags = nn.EmbeddingBag(100, 16, mode="sum").to(dev)
ids = torch.tensor([3, 7, 7, 42, 9, 1], device=dev)
offsets = torch.tensor([0, 2, 5], device=dev)
pooled = bags(ids, offsets)
print(pooled.shape, pooled.sum().item())

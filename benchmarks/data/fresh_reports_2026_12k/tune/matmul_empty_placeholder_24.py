"""Scoring an empty batch of feature rows against a weight vector on MPS."""
import torch

dev = "mps"
feats = torch.empty(0, 7, device=dev)
w = torch.ones(7, device=dev)
scores = feats @ w  # Mac raises here
print(scores.shape)

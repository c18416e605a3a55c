"""Backward through F.linear with a one-dimensional weight (a learned scoring vector), on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
feats = torch.randn(256, 24, device=dev, requires_grad=True)
score_w = torch.randn(24, device=dev, requires_grad=True)
scores = F.linear(feats, score_w)
scores.sum().backward()  # Mac aborts here
print(scores.shape, score_w.grad.shape)

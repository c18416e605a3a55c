"""Exponential-moving-average update of weights with torch.lerp and a tensor weight, on MPS."""
import torch

dev = "mps"
ema = torch.zeros(1000, device=dev)
param = torch.randn(1000, device=dev)
w = torch.full((1000,), 0.01, device=dev)
ema = torch.lerp(ema, param, w)  # Mac: runs on MPS (no error)
print(ema.abs().mean().item())

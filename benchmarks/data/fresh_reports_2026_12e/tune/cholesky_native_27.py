"""Cholesky factors of a batch of symmetric positive-definite matrices on MPS."""
import torch

dev = "mps"
a = torch.randn(8, 5, 5, device=dev)
spd = a @ a.mT + 5 * torch.eye(5, device=dev)
L = torch.linalg.cholesky(spd)
print((L @ L.mT - spd).abs().max().item())

"""Exponentially scaled modified Bessel function K1 in eager mode on MPS."""
import torch

dev = "mps"
r = torch.linspace(0.1, 10.0, 64, device=dev)
k1 = torch.special.scaled_modified_bessel_k1(r)
print(k1[:4].cpu().tolist())

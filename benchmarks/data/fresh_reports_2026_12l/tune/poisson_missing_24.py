"""Sampling counts with torch.poisson from rates held on MPS."""
import torch

dev = "mps"
rates = torch.rand(4, 4, device=dev) * 5
counts = torch.poisson(rates)  # Mac raises here
print(counts.cpu())

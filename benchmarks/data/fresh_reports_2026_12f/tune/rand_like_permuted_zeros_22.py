"""Uniform noise shaped like a permuted (non-contiguous) MPS tensor."""
import torch

dev = "mps"
t = torch.ones(3, 2, 2, device=dev).permute(2, 0, 1)
noise = torch.rand_like(t)  # Mac (torch 2.2): wrong result here (all zeros), no error
print("noise min/max:", noise.min().item(), noise.max().item())

"""Normalising a 4096-long score vector by its sum, compiled with torch.compile on MPS."""
import torch

dev = "mps"


@torch.compile
def normalise(scores):
    return scores / scores.sum()


scores = torch.rand(4096, device=dev)
print(normalise(scores).sum().item())  # Mac raises here

"""Maximum of a score vector that contains a NaN, on MPS."""
import torch

dev = "mps"
scores = torch.tensor([1.0, float("nan"), 3.0], device=dev)
best = torch.max(scores)  # Mac: wrong result here (3.0 instead of nan), no error
print(best.item())

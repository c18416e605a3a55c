"""Global argmax of a transposed (non-contiguous) matrix on MPS."""
import torch

dev = "mps"
scores = torch.randn(6, 6, device=dev)
flat_best = torch.argmax(scores.t())  # Mac raises here
print(flat_best.item())

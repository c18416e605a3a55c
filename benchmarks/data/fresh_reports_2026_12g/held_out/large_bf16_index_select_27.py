"""Picking batch entries by advanced indexing out of a bfloat16 tensor with more than 2**32 elements, on MPS."""
import torch

dev = "mps"
B, M = 11, 20064
scores = torch.zeros(B, M, M, dtype=torch.bfloat16, device=dev)
scores[B - 1] = 1.0
picked = scores[torch.tensor([B - 1, 0], device=dev)]  # Mac: wrong result here (wrong rows returned), no error
print(picked[0].float().sum().item(), "expected", float(M * M))

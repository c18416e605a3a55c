"""Determinant of a complex64 matrix on MPS (e.g. a small unitary from a physics model)."""
import torch

dev = "mps"
a = torch.randn(4, 4, dtype=torch.complex64, device=dev)
d = torch.linalg.det(a)  # Mac raises here
print(d)

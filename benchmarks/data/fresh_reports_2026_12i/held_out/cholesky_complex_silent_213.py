"""Cholesky factor of a complex64 Hermitian positive-definite matrix on MPS, checked by L @ L^H."""
import torch

dev = "mps"
a = torch.randn(64, 64, dtype=torch.complex64)
A = a @ a.mH + 64 * torch.eye(64, dtype=torch.complex64)
L = torch.linalg.cholesky(A.to(dev)).cpu()  # Mac: wrong result here, no error
print("reconstruction error:", (L @ L.mH - A).abs().max().item())

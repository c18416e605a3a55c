"""torch.compile of a Cholesky factorization of a small SPD matrix on MPS."""
import torch

dev = "mps"
spd = torch.eye(4, device=dev) * 2.0 + 0.1
factor = torch.compile(torch.linalg.cholesky)
chol = factor(spd)  # Mac raises here
print(chol)

"""torch.linalg.householder_product (orgqr) on MPS, from a CPU geqrf factorization."""
import torch

dev = "mps"
a = torch.randn(6, 4)
reflectors, tau = torch.geqrf(a)
q = torch.linalg.householder_product(reflectors.to(dev), tau.to(dev))  # Mac raises here
print(q.shape)

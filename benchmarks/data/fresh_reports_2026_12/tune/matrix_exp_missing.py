"""A rotation matrix from a skew-symmetric generator via the matrix exponential, on MPS."""
import torch

dev = "mps"
w = torch.randn(4, 4, device=dev)
skew = w - w.T
rot = torch.linalg.matrix_exp(skew)  # Mac raises here
print(torch.dist(rot @ rot.T, torch.eye(4, device=dev)).item() < 1e-4)

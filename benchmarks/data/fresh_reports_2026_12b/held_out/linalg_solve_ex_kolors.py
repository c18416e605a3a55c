"""A sampler step that solves a small linear system for its coefficients on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
M = torch.randn(3, 3, device=dev) + 3 * torch.eye(3, device=dev)
rhs = torch.randn(3, 1, device=dev)
coeffs = torch.linalg.solve(M, rhs)  # Mac raises here
print(coeffs.flatten().tolist())

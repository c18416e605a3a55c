"""Solving a batch of 3x3 systems against one shared right-hand side (broadcast) on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
A = torch.randn(2, 3, 3)
b = torch.randn(3, 1)
x = torch.linalg.solve(A.to(dev), b.to(dev))  # Mac: wrong result here (batch 1 all zeros), no error
print("residual ok:", torch.allclose(A @ x.cpu(), b.expand(2, 3, 1), atol=1e-4))

"""Solving a small linear system with torch.linalg.solve on MPS (forward only)."""
import torch

dev = "mps"
torch.manual_seed(0)
A = torch.randn(4, 4, device=dev) + 4 * torch.eye(4, device=dev)
b = torch.randn(4, 2, device=dev)
x = torch.linalg.solve(A, b)
print("residual:", (A @ x - b).abs().max().item())

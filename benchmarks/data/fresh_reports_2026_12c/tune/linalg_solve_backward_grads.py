"""Gradients through torch.linalg.solve of a batch of well-conditioned systems, on MPS."""
import torch

dev = "mps"
torch.manual_seed(1)
A = (torch.randn(2, 3, 3) + 3 * torch.eye(3)).to(dev).requires_grad_(True)
B = torch.randn(2, 3, 1).to(dev).requires_grad_(True)
X = torch.linalg.solve(A, B)
X.sum().backward()  # Mac: wrong result here (A.grad and B.grad off), no error
print("grad norms:", A.grad.norm().item(), B.grad.norm().item())

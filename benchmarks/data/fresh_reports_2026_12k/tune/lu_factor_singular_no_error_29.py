"""LU-factoring a singular (rank-1) 2x2 matrix on MPS; the CPU refuses it with an error."""
import torch

dev = "mps"
a = torch.tensor([[1.0, 3.0], [2.0, 6.0]], device=dev)
lu, piv = torch.linalg.lu_factor(a)  # Mac goes silently wrong here: no error, a zero pivot is returned
print(lu.cpu(), piv.cpu())

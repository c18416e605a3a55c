"""The regularized upper incomplete gamma function called on complex64 MPS tensors."""
import torch

dev = "mps"
a = torch.randn(3, dtype=torch.complex64, device=dev)
x = torch.randn(3, dtype=torch.complex64, device=dev)
q = torch.igammac(a, x)  # Mac raises here
print(q)

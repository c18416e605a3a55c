"""Multiplying a 32000 x 32000 identity matrix by itself on MPS (a large projection built from eye)."""
import torch

dev = "mps"
n = 32000
eye = torch.eye(n, device=dev)
prod = eye @ eye  # Mac (torch 2.2): wrong result here (an all-zero product), no error
print("trace:", prod.trace().item(), "expected:", n)

"""Inverting a 1025 x 1025 regularised covariance matrix on MPS."""
import torch

dev = "mps"
n = 1025
a = torch.rand(n, n, device=dev)
cov = a @ a.T + n * torch.eye(n, device=dev)
precision = torch.linalg.inv(cov)  # Mac aborts here
print(precision.shape)

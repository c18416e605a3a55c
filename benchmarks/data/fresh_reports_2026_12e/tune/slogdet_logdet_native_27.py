"""Log-determinants of a batch of covariance matrices on MPS."""
import torch

dev = "mps"
a = torch.randn(4, 6, 6, device=dev)
cov = a @ a.transpose(-1, -2) + 6 * torch.eye(6, device=dev)
sign, logabsdet = torch.linalg.slogdet(cov)
ld = torch.logdet(cov)
print(sign.tolist(), ld.tolist())

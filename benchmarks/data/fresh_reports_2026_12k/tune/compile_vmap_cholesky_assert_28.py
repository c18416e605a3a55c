"""torch.compile of a vmapped gradient of a Gaussian log-density built from a Cholesky factor, on MPS."""
import torch

dev = "mps"


def log_density(x, cov):
    chol = torch.linalg.cholesky(cov)
    white = torch.linalg.inv(chol) @ x
    return -(white ** 2).sum() / 2


score = torch.compile(torch.vmap(torch.func.grad(log_density), in_dims=(0, None)))
cov = torch.diag(torch.tensor([4.0, 0.25, 9.0], device=dev))
pts = torch.randn(5, 3, device=dev)
print(score(pts, cov))  # Mac raises here

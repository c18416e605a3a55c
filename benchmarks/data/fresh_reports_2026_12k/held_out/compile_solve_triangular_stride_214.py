"""torch.compile of a triangular solve against a Cholesky factor (whitening a block of vectors) on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
m = torch.randn(6, 6)
spd = (m @ m.T + 6 * torch.eye(6)).to(dev)
chol = torch.linalg.cholesky(spd)
rhs = torch.randn(6, 6, device=dev)
solve = torch.compile(lambda a, b: torch.linalg.solve_triangular(a, b, upper=False))
x = solve(chol, rhs)  # Mac raises here
print(x.stride())

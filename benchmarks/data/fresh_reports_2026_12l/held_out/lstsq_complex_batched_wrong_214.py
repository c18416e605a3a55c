"""Batched complex64 least squares on underdetermined systems, solved on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
a = torch.randn(8, 32, 48, dtype=torch.complex64)
rhs = torch.randn(8, 32, 3, dtype=torch.complex64)
sol = torch.linalg.lstsq(a.to(dev), rhs.to(dev), rcond=1e-4, driver="gelsd").solution  # Mac goes wrong here
resid = torch.linalg.norm(a @ sol.cpu() - rhs) / torch.linalg.norm(rhs)
print(float(resid))

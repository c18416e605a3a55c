"""torch.var of a complex64 MPS tensor (the variance of a complex signal is a real number)."""
import torch

dev = "mps"
torch.manual_seed(0)
z = torch.randn(64, dtype=torch.complex64).to(dev)
v = torch.var(z)  # Mac goes silently wrong here: a complex result with the wrong value instead of var(Re) + var(Im)
print(v.cpu(), v.dtype)

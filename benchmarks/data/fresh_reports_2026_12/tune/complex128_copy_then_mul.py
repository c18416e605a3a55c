"""A complex128 tensor built on the CPU, moved to MPS, then multiplied elementwise."""
import torch

dev = "mps"
z = torch.randn(3, 3, dtype=torch.complex128)
z_dev = z.to(dev)
prod = z_dev * z_dev
print(torch.allclose(prod.cpu(), z * z))

"""Flux-style rotary embedding frequencies computed in float64 on the positions' device (MPS)."""
import torch

dev = "mps"
dim, theta = 64, 10000
pos = torch.arange(32, device=dev).float()
scale = torch.arange(0, dim, 2, dtype=torch.float64, device=pos.device) / dim  # Mac raises here
omega = 1.0 / (theta**scale)
out = torch.einsum("n,d->nd", pos.double(), omega)
print(out.float().cos().shape)

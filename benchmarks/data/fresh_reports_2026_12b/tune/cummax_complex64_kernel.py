"""A running maximum (cummax) over a complex64 signal on MPS."""
import torch

dev = "mps"
sig = torch.randn(4, 6, dtype=torch.complex64).to(dev)
values, idx = torch.cummax(sig, dim=1)  # Mac raises here
print(values.shape, idx.shape)

"""Broadcast add of two bfloat16 tensors whose result has more than 2**32 elements, on MPS."""
import torch

dev = "mps"
a = torch.rand(1, 1024, 1024, dtype=torch.bfloat16, device=dev)
b = torch.rand(4100, 1, 1, dtype=torch.bfloat16, device=dev)
c = a + b  # Mac raises here
print(c.shape)

"""A training loop's memory report calls a CUDA-style reserved-memory API on the MPS backend."""
import torch

dev = "mps"
x = torch.randn(256, 256, device=dev)
y = x @ x
reserved = torch.mps.max_memory_reserved()  # Mac raises here
print(reserved, y.sum().item())

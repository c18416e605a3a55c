"""Append a sentinel value to a long 1-D index vector with F.pad on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
ids = torch.arange(2 ** 17, device=dev)
padded = F.pad(ids, [0, 1], value=2)  # Mac: wrong values here (2**17 int64 elements), no error
print(padded[:4].tolist(), padded[-3:].tolist())

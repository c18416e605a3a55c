"""torch.index_add on an input with a size-0 leading dimension, on MPS."""
import torch

dev = "mps"
base = torch.zeros(0, 1, 1, 1, device=dev)
src = torch.zeros(0, 1, 1, 1, device=dev)
idx = torch.zeros(1, dtype=torch.int64, device=dev)
out = torch.index_add(base, -3, idx, src, alpha=-0.25)  # Mac raises here
print(out.shape)

"""Summing variable-length segments with torch.segment_reduce on MPS tensors."""
import torch

dev = "mps"
values = torch.arange(1.0, 7.0, device=dev)
lengths = torch.tensor([1, 3, 2], device=dev)
pooled = torch.segment_reduce(values, "sum", lengths=lengths)  # Mac raises here
print(pooled.cpu())

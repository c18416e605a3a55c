"""Bucketize complex-valued features (a mistake a CPU run reports clearly) on MPS."""
import torch

dev = "mps"
values = torch.randn(2, 2, 2, dtype=torch.complex64, device=dev)
edges = torch.randn(4, dtype=torch.complex64, device=dev)
buckets = torch.bucketize(values, edges)  # Mac raises here (searchsorted_float2_long function state)
print(buckets.tolist())

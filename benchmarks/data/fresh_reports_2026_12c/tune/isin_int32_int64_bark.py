"""Checking generated token ids (int64) against an int32 list of stop ids with torch.isin, on MPS."""
import torch

dev = "mps"
tokens = torch.tensor([5, 10_000, 42, 7], device=dev)  # int64
stop_ids = torch.tensor([10_000, 10_001], dtype=torch.int, device=dev)  # int32
hit = torch.isin(tokens, stop_ids)  # Mac raises here
print(hit.tolist())

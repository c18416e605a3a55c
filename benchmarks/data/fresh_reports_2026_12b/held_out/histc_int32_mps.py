"""Counting expert assignments of a mixture-of-experts router with torch.histc on int32 ids, on MPS."""
import torch

dev = "mps"
expert_ids = torch.tensor([0, 1, 2, 1, 0], dtype=torch.int32, device=dev)
counts = torch.histc(expert_ids, bins=3, min=0, max=2)  # Mac raises here
print(counts.tolist())

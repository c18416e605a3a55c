"""Masking special token ids in a batch of input ids with torch.isin (tensor vs tensor), on MPS."""
import torch

dev = "mps"
input_ids = torch.randint(0, 1000, (2, 16), device=dev)
special = torch.tensor([0, 1, 2, 999], device=dev)
mask = torch.isin(input_ids, special)  # Mac raises here
print(mask.sum().item())

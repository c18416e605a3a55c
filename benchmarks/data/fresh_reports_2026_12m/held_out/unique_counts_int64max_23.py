"""Count targets per image in a detection batch with unique(return_counts=True) on MPS."""
import torch

dev = "mps"
batch_idx = torch.zeros(9, device=dev)
ids, counts = batch_idx.unique(return_counts=True)  # Mac goes silently wrong here (count 2**63-1)
print(ids, counts, counts.to(torch.int32))

"""Deduplicating voxel keys above 2**24 with torch.unique(return_inverse=True) on MPS, against the CPU."""
import torch

dev = "mps"
torch.manual_seed(0)
coords = torch.randint(0, 600, (500_000, 3))
keys = (coords[:, 0] * 601 + coords[:, 1]) * 601 + coords[:, 2]
uniq, inv = torch.unique(keys.to(dev), return_inverse=True)
print(torch.equal(uniq[inv].cpu(), keys))

"""An integer hash bucket (a large dividend modulo a small prime) computed on MPS."""
import torch

dev = "mps"
key = torch.as_tensor(50000017, device=dev)
bucket = key % 37
print(bucket.item(), 50000017 % 37)

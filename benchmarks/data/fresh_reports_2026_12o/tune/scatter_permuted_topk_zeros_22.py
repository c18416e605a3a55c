"""Keeping only the top-k entries of a permuted MPS tensor: zeros_like + scatter_ of the topk values along the last dim."""
import torch

dev = "mps"
torch.manual_seed(0)
x = torch.rand(8, 200, 100, device=dev).permute(0, 2, 1)
vals, idx = x.topk(5, dim=2)
kept = torch.zeros_like(x)
kept.scatter_(2, idx, vals)  # Mac goes silently wrong here
print(kept.sum().item(), vals.sum().item())

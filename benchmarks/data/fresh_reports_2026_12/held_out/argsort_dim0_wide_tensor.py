"""Ranking three candidates per column with argsort over dim 0 of a wide (3 x 2**22+1) tensor, MPS vs CPU."""
import torch

dev = "mps"
torch.manual_seed(0)
scores = torch.rand(3, 2**22 + 1)
ref = scores.argsort(dim=0)
got = scores.to(dev).argsort(dim=0).cpu()
print(torch.equal(torch.gather(scores, 0, ref), torch.gather(scores, 0, got)))

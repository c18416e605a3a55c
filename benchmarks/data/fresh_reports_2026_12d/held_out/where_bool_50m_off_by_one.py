"""Locating the few True entries of a ~50M-element boolean mask with torch.where on MPS."""
import torch

dev = "mps"
n = 50_000_000
hits = torch.zeros(n, dtype=torch.bool)
hits[[1_000_003, 16_777_219, 33_554_437, 45_000_011]] = True
expected = torch.where(hits)[0]
got = torch.where(hits.to(dev))[0].cpu()  # Mac: wrong result here (an index above 2**24 off by one), no error
print("expected:", expected.tolist(), "got:", got.tolist())

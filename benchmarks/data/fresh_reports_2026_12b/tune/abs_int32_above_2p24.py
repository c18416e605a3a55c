"""Absolute values of large integer ids (above 2**24) computed on MPS."""
import torch

dev = "mps"
ids32 = torch.tensor([-(2**24 + 1), 2**24 + 1, -(2**24 + 3)], dtype=torch.int32)
ids64 = torch.tensor([-(2**24 + 1), -(2**33 + 7)], dtype=torch.int64)
for ids in (ids32, ids64):
    got = torch.abs(ids.to(dev)).cpu()  # Mac: wrong result here (rounded through float32), no error
    print(ids.dtype, got.tolist(), "expected", torch.abs(ids).tolist())

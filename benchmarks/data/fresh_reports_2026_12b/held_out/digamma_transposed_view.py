"""digamma of a transposed (non-contiguous) view of a small matrix on MPS."""
import torch

dev = "mps"
table = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
expected = torch.digamma(table.t())
got = torch.digamma(table.to(dev).t()).cpu()  # Mac: wrong result here (strides ignored), no error
print("max abs gap:", (expected - got).abs().max().item())

"""A batched matmul with a long reduction axis (K = 32767) on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
a = torch.randn(2, 16, 32767)
b = torch.randn(2, 32767, 16)
expected = torch.bmm(a, b)
got = torch.bmm(a.to(dev), b.to(dev)).cpu()  # Mac (M1/M2): wrong result here, no error
print("max abs gap:", (expected - got).abs().max().item())

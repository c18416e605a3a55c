"""A per-token projection (F.linear with bias) over a 3-D batch of 65,537 rows on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
x = torch.randn(65537, 1, 32)
w = torch.randn(16, 32)
b = torch.randn(16)
ref = F.linear(x, w, b)
got = F.linear(x.to(dev), w.to(dev), b.to(dev)).cpu()  # Mac: wrong result here, no error
print("bad rows:", ((ref - got).abs().amax(dim=(1, 2)) > 1e-3).sum().item())

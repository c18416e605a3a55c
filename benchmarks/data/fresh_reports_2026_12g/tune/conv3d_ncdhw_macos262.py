"""A Conv3d layer on a contiguous (NCDHW) volume batch on MPS, compared against the CPU."""
import torch

dev = "mps"
torch.manual_seed(0)
conv = torch.nn.Conv3d(16, 16, 3, padding=1)
x = torch.randn(1, 16, 8, 8, 8)
with torch.no_grad():
    ref = conv(x)
    got = conv.to(dev)(x.to(dev)).cpu()  # Mac: wrong result here on macOS 26.2, no error
print("relative gap:", ((ref - got).abs().max() / ref.abs().max()).item())

"""A 2-D convolution with a 1 x 256 kernel (a long temporal filter) on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
x = torch.randn(2, 1, 4, 600)
w = torch.randn(1, 1, 1, 256)
ref = F.conv2d(x, w)
out = F.conv2d(x.to(dev), w.to(dev))  # Mac: wrong result here (kernel dim >= 256), no error
print("max abs gap:", (out.cpu() - ref).abs().max().item())

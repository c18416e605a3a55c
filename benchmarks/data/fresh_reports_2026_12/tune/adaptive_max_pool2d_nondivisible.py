"""Adaptive max pooling of 5x5 feature maps down to 3x3 on MPS, compared with the CPU."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
fmap = torch.randn(2, 4, 5, 5)
ref = F.adaptive_max_pool2d(fmap, (3, 3))
got = F.adaptive_max_pool2d(fmap.to(dev), (3, 3))
print(torch.equal(ref, got.cpu()))

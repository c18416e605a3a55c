"""Linear 1-D upsampling of a feature sequence on MPS, forward and backward."""
import torch
import torch.nn.functional as F

dev = "mps"
seq = torch.randn(2, 3, 10, device=dev, requires_grad=True)
up = F.interpolate(seq, size=20, mode="linear", align_corners=False)
up.sum().backward()
print(up.shape, seq.grad.shape)

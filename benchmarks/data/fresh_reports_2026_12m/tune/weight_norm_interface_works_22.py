"""A weight-normalised 1-D convolution (as in TTS vocoders) running forward and backward on MPS."""
import torch
import torch.nn as nn

dev = "mps"
conv = nn.utils.weight_norm(nn.Conv1d(8, 8, 3, padding=1)).to(dev)
x = torch.randn(2, 8, 50, device=dev)
y = conv(x)  # Mac completes (aten::_weight_norm_interface has an MPS kernel from 2.2)
y.pow(2).mean().backward()
print(y.shape, conv.weight_g.grad.shape)

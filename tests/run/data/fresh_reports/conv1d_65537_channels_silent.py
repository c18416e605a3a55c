"""A 1-D convolution with 65537 output channels on MPS, compared against the CPU."""
import torch

dev = "mps"
torch.manual_seed(0)
conv = torch.nn.Conv1d(1, 65537, 3, padding=1)
x = torch.ones(1, 1, 3)
ref = conv(x)
got = conv.to(dev)(x.to(dev))  # Mac raises here once the guard exists
print(torch.equal(ref, got.cpu()))

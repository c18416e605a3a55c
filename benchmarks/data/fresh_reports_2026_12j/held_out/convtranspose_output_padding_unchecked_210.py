"""A stride-1 transposed convolution decoder layer configured with an output_padding it cannot use."""
import torch
import torch.nn as nn

dev = "mps"
layer = nn.ConvTranspose2d(1, 1, kernel_size=3, stride=1, output_padding=1).to(dev)
x = torch.randn(1, 1, 4, 4, device=dev)
y = layer(x)  # Mac: returns a wider tensor here instead of raising (output_padding >= stride), no error
print(tuple(y.shape))

"""A feature extractor whose 1-D convolution has more than 2**16 output channels."""
import torch
import torch.nn.functional as F

dev = "mps"
wave = torch.randn(1, 1, 5, device=dev)
weight = torch.randn(65537, 1, 1, device=dev)
feats = F.conv1d(wave, weight)  # Mac raises here
print(feats.shape)

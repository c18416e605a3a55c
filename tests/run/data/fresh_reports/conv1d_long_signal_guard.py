"""A WaveNet-style dilated 1-D convolution over an audio clip longer than 65536 samples."""
import torch

dev = "mps"
layer = torch.nn.Conv1d(1, 2, kernel_size=3, dilation=2, padding=2).to(dev)
clip = torch.randn(1, 1, 70000, device=dev)
out = layer(clip)  # Mac raises here
print(out.shape)

"""The downsampling step of a 3-D U-Net (MaxPool3d) on a small volume on MPS."""
import torch

dev = "mps"
pool = torch.nn.MaxPool3d(kernel_size=2)
vol = torch.randn(1, 2, 8, 8, 8, device=dev)
print(pool(vol).shape)  # Mac raises here

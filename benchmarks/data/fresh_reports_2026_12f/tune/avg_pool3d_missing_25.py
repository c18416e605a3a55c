"""3-D average pooling over a short video clip tensor on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
clip = torch.randn(1, 8, 4, 32, 32, device=dev)
pooled = F.avg_pool3d(clip, kernel_size=2)  # Mac (torch 2.5) raises here
print(pooled.shape)

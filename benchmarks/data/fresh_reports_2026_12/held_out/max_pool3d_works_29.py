"""3-D max pooling with indices of a small volume on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
vol = torch.randn(1, 1, 6, 6, 6, device=dev)
pooled, idx = F.max_pool3d(vol, kernel_size=2, return_indices=True)
print(pooled.shape, idx.dtype)

"""Flattening the indices of non-zero spatial gradients with .view(-1), on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
img = torch.randn(1, 1, 3, 3, device=dev)
grad = torch.gradient(img, dim=(2, 3))[0]
flat = torch.nonzero(grad).view(-1)  # the CPU raises here (view of a non-contiguous result); the Mac completes
print(flat.shape)

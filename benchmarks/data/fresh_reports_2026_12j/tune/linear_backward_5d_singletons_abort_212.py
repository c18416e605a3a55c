"""Backward through nn.functional.linear on a 5-D activation with two singleton dims, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
x = torch.randn(2, 1, 2, 1, 2, device=dev, requires_grad=True)
w = torch.randn(4, 2, device=dev, requires_grad=True)
loss = F.linear(x, w).sum()
loss.backward()  # Mac aborts here (macOS 27: MLIR pass manager failed)
print(x.grad.shape, w.grad.shape)

"""Gradient through Tensor.unfold (overlapping frames of a signal) on MPS."""
import torch

dev = "mps"
signal = torch.randn(2, 4096, device=dev, requires_grad=True)
frames = signal.unfold(-1, 512, 128)
frames.pow(2).sum().backward()
print(signal.grad.shape)

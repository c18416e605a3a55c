"""Accumulating messages into a permuted (non-contiguous) buffer with index_add_ on MPS."""
import torch

dev = "mps"
buf = torch.zeros(2, 5, 3, device=dev).permute(1, 0, 2)  # 5 x 2 x 3 view
msgs = torch.ones(2, 4, 3, device=dev).permute(1, 0, 2)  # 4 x 2 x 3 view
targets = torch.tensor([0, 2, 2, 4], device=dev)
buf.index_add_(0, targets, msgs)  # Mac: wrong result here on macOS 14 (buffer left unchanged), no error
print("total:", buf.sum().item(), "expected", 24.0)

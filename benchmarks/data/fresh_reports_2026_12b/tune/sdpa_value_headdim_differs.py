"""Attention whose value head size (24) differs from the query/key head size (32), on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
q = torch.randn(1, 1, 16, 32, device=dev)
k = torch.randn(1, 1, 16, 32, device=dev)
v = torch.randn(1, 1, 16, 24, device=dev)
out = F.scaled_dot_product_attention(q, k, v)  # Mac: wrong result here (last dim 32, not 24), no error
print("output shape:", tuple(out.shape))

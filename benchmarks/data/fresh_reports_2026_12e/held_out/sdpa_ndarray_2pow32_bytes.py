"""Self-attention over a long token sequence (12 heads, head dim 128) with scaled_dot_product_attention on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
q = torch.randn(1, 12, 12800, 128, device=dev)
k = torch.randn(1, 12, 12800, 128, device=dev)
v = torch.randn(1, 12, 12800, 128, device=dev)
out = F.scaled_dot_product_attention(q, k, v)  # Mac aborts here
print(out.shape)

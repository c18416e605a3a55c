"""Grouped-query attention (4 query heads, 2 kv heads) with an explicit float mask on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
q = torch.rand(2, 4, 3, 8, device=dev)
k = torch.rand(2, 2, 3, 8, device=dev)
v = torch.rand(2, 2, 3, 8, device=dev)
mask = torch.ones(3, 3, device=dev)
out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)  # Mac aborts here (LLVM ERROR)
print(tuple(out.shape))

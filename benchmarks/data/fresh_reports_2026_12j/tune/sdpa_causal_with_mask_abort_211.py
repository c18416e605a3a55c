"""Cross-attention called with both is_causal=True and a boolean attn_mask on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
q = torch.randn(1, 2, 4, 64, device=dev)
k = torch.randn(1, 2, 16, 64, device=dev)
v = torch.randn(1, 2, 16, 64, device=dev)
mask = torch.zeros(1, 2, 4, 16, dtype=torch.bool, device=dev)
out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)  # Mac aborts here (NSInvalidArgumentException)
print(tuple(out.shape))

"""Self-attention with a per-batch float mask broadcast over heads (shape (B, 1, L, L)) on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
q = torch.randn(2, 4, 8, 64, device=dev)
mask = torch.zeros(2, 1, 8, 8, device=dev)
mask[0, 0, 4:, :4] = float("-inf")
out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)  # Mac: wrong values here (mask offset), no error
print(out.float().abs().mean().item())

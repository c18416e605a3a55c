"""Causal self-attention in float16 on MPS, checked against a float32 CPU reference."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
q, k, v = (torch.randn(1, 4, 64, 64) for _ in range(3))
ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
half = [t.to(dev, torch.float16) for t in (q, k, v)]
got = F.scaled_dot_product_attention(*half, is_causal=True)
err = (got.float().cpu() - ref).abs().max().item()
print(f"max abs diff {err:.4f}", err < 1e-2)

"""torch.compile of flex_attention on MPS with a score_mod that adds a captured (N, N) bias tensor."""
import torch
from torch.nn.attention.flex_attention import flex_attention

dev = "mps"
n = 128
q = torch.randn(1, 2, n, 32, device=dev)
k = torch.randn(1, 2, n, 32, device=dev)
v = torch.randn(1, 2, n, 32, device=dev)
rel_bias = torch.randn(n, n, device=dev)


def add_bias(score, b, h, q_idx, kv_idx):
    return score + rel_bias[q_idx, kv_idx]


attn = torch.compile(flex_attention)
out = attn(q, k, v, score_mod=add_bias)  # the Mac completes here on 2.13 (captured buffers unsupported on MPS before the fix)
print(out.shape)

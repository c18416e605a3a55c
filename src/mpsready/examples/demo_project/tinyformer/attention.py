"""Causal self-attention: flash-attn on the GPU server, PyTorch's SDPA elsewhere."""

import torch
import torch.nn.functional as F
from torch import nn

try:
    from flash_attn import flash_attn_func
except ImportError:
    flash_attn_func = None


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float = 0.0):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(dim=2)
        p = self.dropout if self.training else 0.0
        if flash_attn_func is not None and x.is_cuda:
            y = flash_attn_func(q, k, v, dropout_p=p, causal=True)
        else:
            y = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), dropout_p=p, is_causal=True
            ).transpose(1, 2)
        return self.proj(y.reshape(b, t, d))

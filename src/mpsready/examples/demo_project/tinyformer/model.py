"""The model: token embedding, sinusoidal positions, pre-norm blocks, a tied head."""

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from tinyformer.attention import CausalSelfAttention
from tinyformer.ops import gelu


@dataclass
class TinyFormerConfig:
    vocab: int = 96
    dim: int = 64
    heads: int = 4
    layers: int = 2
    context: int = 32
    dropout: float = 0.0


def sinusoidal_positions(context: int, dim: int) -> np.ndarray:
    """(context, dim) position encodings, computed in NumPy (float64, NumPy's default)."""
    pos = np.arange(context)[:, None]
    freq = np.exp(-np.log(10000.0) * np.arange(0, dim, 2) / dim)
    pe = np.zeros((context, dim))
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)
    return pe


class MLP(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.down(gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self, cfg: TinyFormerConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.dim)
        self.attn = CausalSelfAttention(cfg.dim, cfg.heads, cfg.dropout)
        self.ln2 = nn.LayerNorm(cfg.dim)
        self.mlp = MLP(cfg.dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyFormer(nn.Module):
    def __init__(self, cfg: TinyFormerConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        # The float64 leak: torch.from_numpy keeps NumPy's float64, and the buffer moves with the model.
        self.register_buffer("positions", torch.from_numpy(sinusoidal_positions(cfg.context, cfg.dim)))
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln_f = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab, bias=False)
        self.head.weight = self.embed.weight
        nn.init.normal_(self.embed.weight, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.embed(idx) + self.positions[:t].to(torch.float32)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

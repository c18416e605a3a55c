"""A small decoder-only transformer (GPT-style) training step, written as an mpsready ENTRY.

Token and learned position embeddings, pre-norm ``nn.TransformerEncoderLayer`` blocks with GELU and
a causal mask, a tied output projection, next-token cross-entropy and AdamW, as in nanoGPT-like
training scripts.

    mpsready trace examples/tiny_transformer_step.py:step --torch 2.13 --macos 14.4
"""

import torch
import torch.nn.functional as F
from torch import nn

from mpsready.step import Step

VOCAB, CONTEXT = 512, 32


class TinyGPT(nn.Module):
    def __init__(self, vocab=VOCAB, context=CONTEXT, d=64, heads=4, layers=2, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        block = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # weight tying

    def forward(self, ids):
        t = ids.shape[1]
        pos = torch.arange(t, device=ids.device)
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        x = self.blocks(x, mask=mask, is_causal=True)
        return self.head(self.norm(x))


def next_token_loss(logits, target):
    return F.cross_entropy(logits.flatten(0, 1), target.flatten())


def make_batch(n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (n, CONTEXT + 1), generator=g)
    return ids[:, :-1], ids[:, 1:]


def step(device="cpu"):
    torch.manual_seed(0)
    model = TinyGPT()
    return Step(model=model, batch=make_batch, loss_fn=next_token_loss,
                optimizer=lambda params: torch.optim.AdamW(params, lr=3e-4, weight_decay=0.1))

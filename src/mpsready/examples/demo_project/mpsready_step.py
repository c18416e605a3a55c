"""The representative step for mpsready (``mpsready check . --entry mpsready_step.py:step``).

One training step of the real model at its real width, on a fixed synthetic batch, so it
runs in well under a second and needs no data set.
"""

import torch
import torch.nn.functional as F

from mpsready.step import Step
from tinyformer import TinyFormer, TinyFormerConfig


def step(device: str = "cpu") -> Step:
    torch.manual_seed(0)
    cfg = TinyFormerConfig()
    model = TinyFormer(cfg)
    gen = torch.Generator().manual_seed(1)
    idx = torch.randint(0, cfg.vocab, (8, cfg.context + 1), generator=gen)
    inputs, target = idx[:, :-1], idx[:, 1:]

    def loss_fn(logits, target):
        return F.cross_entropy(logits.reshape(-1, cfg.vocab), target.reshape(-1))

    return Step(
        model=model,
        batch=(inputs, target),
        loss_fn=loss_fn,
        optimizer=lambda params: torch.optim.AdamW(params, lr=3e-4),
    )

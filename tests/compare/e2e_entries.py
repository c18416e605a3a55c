"""Entries recorded with the real ``mpsready record`` in test_end_to_end.py (tiny, SGD, CPU)."""

import torch
from torch import nn
from torch.nn import functional as F

from mpsready.step import Step


def _batch():
    g = torch.Generator().manual_seed(2)
    return torch.randn(6, 1, 8, 8, generator=g), torch.randint(0, 4, (6,), generator=g)


def cnn(device="cpu"):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(3 * 4 * 4, 4))
    return Step(model=model, batch=_batch(), loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def cnn_dropout(device="cpu"):
    """Weights fixed by their own generator; the dropout mask comes from the run's seed (--seed)."""
    g = torch.Generator().manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Dropout(0.5), nn.Linear(3 * 4 * 4, 4))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return Step(model=model, batch=_batch(), loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))

"""Example ENTRY for `mpsready record` (docs/run-record.md): a tiny CNN classifier step.

    mpsready record docs/examples/tiny_cnn_entry.py:step --device cpu --steps 2 --out runs/cpu
"""
import torch
from torch import nn
from torch.nn import functional as F

from mpsready.step import Step


def step(device="cpu"):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(4 * 4 * 4, 3),
    )
    g = torch.Generator().manual_seed(1)
    images = torch.randn(4, 1, 8, 8, generator=g)
    labels = torch.randint(0, 3, (4,), generator=g)
    return Step(model=model, batch=(images, labels), loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))

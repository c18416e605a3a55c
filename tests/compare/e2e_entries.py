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


class _FunctionalDropoutNet(nn.Module):
    """Dropout as a function call in ``forward``: no ``nn.Dropout`` module for compare to see."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 4 * 4, 4)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv(x)), 2).flatten(1)
        return self.fc(F.dropout(h, self.p, self.training))


def _functional(p: float):
    g = torch.Generator().manual_seed(1)
    model = _FunctionalDropoutNet(p)
    with torch.no_grad():
        for q in model.parameters():
            q.copy_(torch.randn(q.shape, generator=g) * 0.3)
    return Step(model=model, batch=_batch(), loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def cnn_functional_dropout(device="cpu"):
    """F.dropout(p=0.5) in forward; weights and batch fixed, the mask comes from the run's seed."""
    return _functional(0.5)


def cnn_functional_no_dropout(device="cpu"):
    """The same network with p=0: F.dropout returns its input and draws nothing."""
    return _functional(0.0)


def _tiny_gpt_step():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "tiny_transformer_step.py"
    spec = importlib.util.spec_from_file_location("_mpsready_example_tiny_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.step()


def tiny_gpt(device="cpu"):
    """examples/tiny_transformer_step.py as it is."""
    return _tiny_gpt_step()


def tiny_gpt_perturbed(device="cpu"):
    """The same, with one layer changed: the second block's feed-forward output weights nudged by 1e-3."""
    st = _tiny_gpt_step()
    with torch.no_grad():
        st.model.blocks.layers[1].linear2.weight.add_(1e-3)
    return st

"""Entries of the numerics tests: tiny steps whose first NaN/Inf is made at a known line."""
import torch
from torch import nn
from torch.nn import functional as F

from mpsready.step import Step


class LogHead(nn.Module):
    """A linear layer whose output goes through log: its negative entries make the first NaN."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        y = self.lin(x)
        return torch.log(y)  # LOG_LINE


def log_negative(device="cpu"):
    torch.manual_seed(0)
    model = LogHead()
    g = torch.Generator().manual_seed(1)
    batch = (torch.randn(5, 4, generator=g), torch.randint(0, 3, (5,), generator=g))
    return Step(model=model, batch=batch, loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


class Normalise(nn.Module):
    """Divides by a tiny scale computed under float16 autocast: 1e-4 * 1e-4 underflows to 0 in float16."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.float16):
            y = self.lin(x)  # float16 under autocast
            scale = torch.mm(torch.full((5, 1), 1e-4, device=x.device), torch.full((1, 4), 1e-4, device=x.device))
            z = y / scale  # DIV_LINE
        return z.float()


def fp16_underflow(device="cpu"):
    torch.manual_seed(0)
    model = Normalise()
    g = torch.Generator().manual_seed(1)
    batch = (torch.randn(5, 4, generator=g), torch.randint(0, 4, (5,), generator=g))
    return Step(model=model, batch=batch, loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def finite(device="cpu"):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    g = torch.Generator().manual_seed(1)
    batch = (torch.randn(5, 4, generator=g), torch.randint(0, 3, (5,), generator=g))
    return Step(model=model, batch=batch, loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


class SeqModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)

    def forward(self, x):
        h = torch.tanh(self.proj(x))  # SEQ_LINE
        return h.mean(dim=1)


def _seq_step(lengths):
    torch.manual_seed(0)
    model = SeqModel()
    calls = iter(lengths)

    def batch():
        n = next(calls)
        g = torch.Generator().manual_seed(n)
        return torch.randn(2, n, 6, generator=g), torch.randn(2, 6, generator=g)

    return Step(model=model, batch=batch, loss_fn=F.mse_loss, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def variable_length(device="cpu"):
    return _seq_step([3, 4, 5, 6, 7, 8])


def fixed_length(device="cpu"):
    return _seq_step([5] * 6)


def nan_batch(device="cpu"):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3))
    x = torch.ones(5, 4)
    x[2, 1] = float("nan")
    return Step(model=model, batch=(x, torch.zeros(5, dtype=torch.long)), loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.lin(x))


def replay_model(device="cpu"):
    from collections import OrderedDict

    torch.manual_seed(0)
    model = nn.Sequential(OrderedDict(pre=nn.Linear(6, 8), mid=Block(), head=nn.Linear(8, 3)))
    g = torch.Generator().manual_seed(1)
    return Step(model=model, batch=(torch.randn(16, 6, generator=g), torch.randint(0, 3, (16,), generator=g)),
                loss_fn=F.cross_entropy, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


class LogInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(torch.log(x))  # LATE_LINE


def late_nan(device="cpu"):
    torch.manual_seed(0)
    model = LogInput()
    shifts = iter([2.0, 1.0, -1.0, -2.0])

    def batch():  # positive inputs in steps 0 and 1, some negative from step 2 on
        return torch.linspace(0.0, 1.0, 20).reshape(5, 4) + next(shifts), torch.zeros(5, dtype=torch.long)

    return Step(model=model, batch=batch, loss_fn=F.cross_entropy, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


class Sinc(nn.Module):
    """A resampling kernel built on the CPU in float64 (sin(t)/t is 0/0 at t = 0), then used on the model's device:
    ``masked`` replaces the NaN by where before use; otherwise the NaN reaches the kernel's sum."""

    def __init__(self, masked):
        super().__init__()
        self.lin = nn.Linear(5, 3)
        self.masked = masked

    def forward(self, x):
        t = torch.linspace(-2, 2, 5, dtype=torch.float64)
        k = torch.sin(t) / t  # SINC_LINE
        if self.masked:
            k = torch.where(t == 0, torch.ones_like(t), k)  # MASK_LINE
        k = k / k.sum()  # SUM_LINE
        return self.lin(x * k.float().to(x.device))


def sinc(masked, device="cpu"):
    torch.manual_seed(0)
    model = Sinc(masked)
    g = torch.Generator().manual_seed(1)
    batch = (torch.randn(4, 5, generator=g), torch.randint(0, 3, (4,), generator=g))
    return Step(model=model, batch=batch, loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def sinc_masked(device="cpu"):
    return sinc(True, device)


def sinc_unmasked(device="cpu"):
    return sinc(False, device)

"""Entries traced by the trace tests. Lines marked ``# at: NAME`` are where tests expect a finding."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mpsready.step import Step


class SmallCNN(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(16 * 4 * 4, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(self.drop(torch.flatten(x, 1)))


def cnn(device="cpu"):
    torch.manual_seed(0)
    model = SmallCNN()
    batch = (torch.randn(4, 3, 16, 16), torch.tensor([0, 1, 2, 3]))
    return Step(model=model, batch=batch, loss_fn=F.cross_entropy,
                optimizer=lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9))


def eig():
    torch.manual_seed(0)
    a = torch.randn(4, 4)

    def step():
        vals, _ = torch.linalg.eig(a)  # at: eig
        return vals.real.sum()

    return step


WEIGHTS = np.array([1.0, 2.0, 0.5, 1.0])  # NumPy's default dtype: float64


def weighted_loss(out, target):
    w = torch.from_numpy(WEIGHTS)  # at: float64
    return (F.cross_entropy(out, target, reduction="none") * w).mean()


def float64_loss(device="cpu"):
    torch.manual_seed(0)
    model = nn.Linear(6, 4)
    return Step(model=model, batch=(torch.randn(4, 6), torch.tensor([0, 1, 2, 3])), loss_fn=weighted_loss)


class CTCHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 5)

    def forward(self, x):
        return self.proj(x).log_softmax(-1)


def ctc_loss(log_probs, targets):
    t, n = log_probs.shape[:2]
    in_lens = torch.full((n,), t, dtype=torch.long)
    out_lens = torch.full((n,), targets.shape[1], dtype=torch.long)
    return F.ctc_loss(log_probs, targets, in_lens, out_lens)  # at: ctc


def ctc(device="cpu"):
    torch.manual_seed(0)
    model = CTCHead()
    batch = (torch.randn(12, 2, 8), torch.randint(1, 5, (2, 4)))
    return Step(model=model, batch=batch, loss_fn=ctc_loss,
                optimizer=lambda params: torch.optim.SGD(params, lr=0.1))


class SparseMasked(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        keep = torch.zeros(4, 6, dtype=torch.bool)
        keep[2:, ::2] = True
        self.register_buffer("heads", keep.to_sparse(), persistent=False)  # at: sparse

    def forward(self, x):
        return self.lin(x)


def sparse_buffer(device="cpu"):
    torch.manual_seed(0)
    return Step(model=SparseMasked(), batch=torch.randn(3, 6), loss_fn=lambda out: out.pow(2).mean())


class Mixed(nn.Module):
    """Convolution, batch norm, LSTM, attention and embedding: the ops whose kernels differ by device."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 16)
        self.conv = nn.Conv1d(16, 16, 3, padding=1)
        self.bn = nn.BatchNorm1d(16)
        self.lstm = nn.LSTM(16, 16, batch_first=True)
        self.qkv = nn.Linear(16, 48)
        self.out = nn.Linear(16, 3)

    def forward(self, ids):
        x = self.emb(ids)  # (N, T, 16)
        x = self.bn(self.conv(x.transpose(1, 2))).transpose(1, 2)
        x, _ = self.lstm(x)
        n, t, _ = x.shape
        # (N, heads=2, T, 8): 4-D inputs take the CPU flash kernel (_scaled_dot_product_flash_attention_for_cpu)
        q, k, v = self.qkv(x).view(n, t, 3, 2, 8).permute(2, 0, 3, 1, 4)
        x = F.scaled_dot_product_attention(q, k, v)
        return self.out(x.transpose(1, 2).reshape(n, t, 16).mean(1))


def mixed(device="cpu"):
    torch.manual_seed(0)
    model = Mixed()
    batch = (torch.randint(0, 20, (4, 7)), torch.tensor([0, 1, 2, 0]))
    return Step(model=model, batch=batch, loss_fn=F.cross_entropy,
                optimizer=lambda params: torch.optim.AdamW(params, lr=1e-3))


def nanmedian():
    x = torch.randn(3, 5)

    def step():
        return torch.nanmedian(x, dim=1).values.sum()  # at: nanmedian

    return step


def failing_loss(device="cpu"):
    model = nn.Linear(4, 2)
    return Step(model=model, batch=(torch.randn(3, 4), torch.tensor([0, 1, 1])),
                loss_fn=lambda out, target: out @ torch.ones(3, 3))  # at: bad-loss


def encoder_layer(device="cpu"):
    torch.manual_seed(0)
    model = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    return Step(model=model, batch=torch.randn(2, 5, 16), loss_fn=lambda out: out.pow(2).mean())


@torch.library.custom_op("mpsready_test::scale", mutates_args=())
def _scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    return x * factor


@_scale.register_fake
def _(x, factor):
    return torch.empty_like(x)


def custom_op():
    x = torch.randn(3)

    def step():
        return torch.ops.mpsready_test.scale(x, 2.0).sum()  # at: custom

    return step


def grad_scaler():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    x = torch.randn(3, 4)

    def step():
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)  # at: scaler
        scaler.update()
        return loss

    return step


class DropoutMLP(nn.Module):
    """nn.Dropout and F.dropout, each on its own line, between linear layers (no other mul in the step)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 3)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = self.drop(h)  # at: module-dropout
        h = F.relu(self.fc2(h))
        h = F.dropout(h, 0.1, self.training)  # at: functional-dropout
        return self.fc3(h)


def dropout_mlp(device="cpu"):
    torch.manual_seed(0)
    model = DropoutMLP()
    return Step(model=model, batch=(torch.randn(4, 8), torch.tensor([0, 1, 2, 0])), loss_fn=F.cross_entropy,
                optimizer=lambda params: torch.optim.SGD(params, lr=0.1))

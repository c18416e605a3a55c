"""Entries recorded by the record tests: tiny, deterministic, two steps in well under a second."""
import os
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from mpsready.step import Step


def cnn_model():
    torch.manual_seed(1)
    # inplace ReLU after the conv: the recorded conv output must be the value before the ReLU
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(3 * 4 * 4, 4))


def cnn_batch():
    g = torch.Generator().manual_seed(2)
    return torch.randn(6, 1, 8, 8, generator=g), torch.randint(0, 4, (6,), generator=g)


def small_cnn(device="cpu"):
    model = cnn_model()
    return Step(model=model, batch=cnn_batch(), loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.enc = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.head = nn.Linear(8, 11)

    def forward(self, tokens):
        return self.head(self.enc(self.emb(tokens)))


def transformer_model():
    torch.manual_seed(3)
    return TinyTransformer()


def transformer_batch():
    g = torch.Generator().manual_seed(4)
    tokens = torch.randint(0, 11, (3, 5), generator=g)
    return tokens, torch.randint(0, 11, (3, 5), generator=g)


def transformer_loss(logits, target):
    return F.cross_entropy(logits.reshape(-1, 11), target.reshape(-1))


def small_transformer(device="cpu"):
    model = transformer_model()
    return Step(model=model, batch=transformer_batch(), loss_fn=transformer_loss,
                optimizer=torch.optim.Adam(model.parameters(), lr=1e-2))


class BadBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("backward exploded")


class Boom(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        return BadBackward.apply(self.lin(x))


def failing_backward():
    m = Boom()
    return Step(model=m, batch=torch.randn(3, 4), loss_fn=lambda out: out.sum(),
                optimizer=torch.optim.SGD(m.parameters(), lr=0.1))


class Aborts(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        h = self.lin(x)
        os.abort()  # what some MPS kernels do: no exception, the process is gone
        return h


def aborting_forward():
    m = Aborts()
    return Step(model=m, batch=torch.randn(3, 4), loss_fn=lambda out: out.sum())


def whole_step():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)

    def step():
        loss = (w * 2).sum()
        loss.backward()
        return loss

    return step


def nan_loss():
    m = nn.Linear(2, 1)
    return Step(model=m, batch=torch.tensor([[float("nan"), 1.0]]), loss_fn=lambda out: out.sum())


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x, mask):
        return (self.lin(x) * mask).sum()


def two_inputs_no_target():
    torch.manual_seed(5)
    m = TwoInputs()
    # like nanoGPT's model(idx, targets): two inputs, the model returns the loss, no separate target
    return Step(model=m, batch=((torch.randn(3, 4), torch.ones(3, 1)), None), loss_fn=None,
                optimizer=torch.optim.SGD(m.parameters(), lr=0.1))


def hangs():
    import time

    time.sleep(300)  # a hung step (deadlocked kernel, endless loop): --timeout kills it


def spawns_and_hangs():
    """A step that starts a helper process (like a DataLoader worker) and then hangs; the helper carries the
    marker from MPSREADY_TEST_MARKER in its command line so a process listing can find it."""
    import subprocess
    import sys
    import time

    marker = os.environ["MPSREADY_TEST_MARKER"]
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", marker])
    (Path(os.environ["MPSREADY_TEST_READY"])).write_text("started")
    time.sleep(300)


class NoteModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, note):
        import warnings

        warnings.warn(f"odd sample {note}")  # noqa: B028  # a warning text that quotes the user's data
        return self.fc(x)


def with_private_values(device="cpu"):
    torch.manual_seed(0)
    model = NoteModel()
    print("PRIVATE-PRINT patient-42")
    x, y = torch.randn(3, 4), torch.tensor([0, 1, 0])
    return Step(model=model, batch=((x, "patient-42"), y), loss_fn=F.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))

"""Entries used by the step-runner tests."""
import os

import torch
from torch import nn

from mpsready.step import Step


def tiny(device="cpu"):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    batch = (torch.randn(5, 4), torch.tensor([0, 1, 1, 0, 1]))
    return Step(model=model, batch=batch, loss_fn=nn.functional.cross_entropy,
                optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


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
    return {"model": m, "batch": torch.randn(3, 4), "loss_fn": lambda out: out.sum(),
            "optimizer": lambda params: torch.optim.SGD(params, lr=0.1)}


def whole():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)

    def step():
        loss = (w * 2).sum()
        loss.backward()
        return loss

    return step


def not_a_step():
    return 42


def aborts():
    os.abort()


class FailingForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        raise ValueError("forward exploded")


STEPPED = []


class CountingSGD(torch.optim.SGD):
    def step(self, closure=None):
        STEPPED.append(1)
        return super().step(closure)


def failing_forward():
    m = FailingForward()
    return Step(model=m, batch=torch.randn(3, 4), loss_fn=lambda out: out.sum(),
                optimizer=CountingSGD(m.parameters(), lr=0.1))


class _InputGradNet(torch.nn.Module):
    """Evaluation differentiates its input (a physics-informed residual): needs autograd at inference."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)

    def forward(self, x):
        x = x.detach().requires_grad_(True)
        y = self.lin(x).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=self.training)
        return g.sum(-1)


def input_grad(inference_grad=True):
    return Step(model=_InputGradNet(), batch=(torch.randn(4, 2), torch.zeros(4)),
                loss_fn=torch.nn.functional.mse_loss, optimizer=lambda p: torch.optim.SGD(p, lr=0.1),
                inference_grad=inference_grad)


def input_grad_default():
    return input_grad(inference_grad=False)

import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, inputs):
        gain = torch.full((self.dim,), 0.5).cuda()  # the module's own parameters say where it computes
        out = self.fc(inputs) * gain
        return offset(out)


def offset(h):
    shift = torch.ones(h.shape[-1])
    return shift.cuda() + h  # a neighbour operand: h is a tensor here, and never moved


def penalty(y):
    weight = torch.linspace(0.0, 1.0, y.size(-1)).cuda()  # a tensor parameter of the function
    return (y.abs() * weight).mean()

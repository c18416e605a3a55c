import torch
import torch.nn as nn


class Gate(nn.Module):
    """A layer that builds a mask and moves it only when its input is on CUDA."""

    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        mask = torch.linspace(0.5, 1.0, x.shape[1])
        if x.is_cuda:
            mask = mask.cuda()
        return self.lin(x) * mask

"""A custom layer that solves a batch of small linear systems in every forward pass, on MPS."""
import torch
import torch.nn as nn

dev = "mps"


class SolveLayer(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.A = nn.Parameter(torch.eye(n) * 2 + 0.1 * torch.randn(n, n))

    def forward(self, x):
        return torch.linalg.solve(self.A, x.unsqueeze(-1)).squeeze(-1)  # Mac raises here


layer = SolveLayer().to(dev)
x = torch.randn(8, 4, device=dev)
y = layer(x)
print(y.shape)

"""A denoiser block on MPS whose conditioning vector is built on the CPU inside forward."""
import torch
import torch.nn.functional as F

dev = "mps"


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 6)

    def forward(self, x):
        cond = torch.linspace(0, 1, x.shape[-1]).expand_as(x)  # created on the default (CPU) device
        return F.linear(cond, self.proj.weight, self.proj.bias) + x  # Mac raises here


block = Block().to(dev)
print(block(torch.randn(2, 6, device=dev)).sum().item())

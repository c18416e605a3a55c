"""torch.compile of a small function that uses sinh on MPS tensors."""
import torch

dev = "mps"


def smooth(x):
    return torch.sinh(x) * 0.5 + x


x = torch.linspace(-2.0, 2.0, 16, device=dev)
y = torch.compile(smooth)(x)  # Mac raises here
print(y.cpu())

"""torch.compile of a feature map built on the exponentially scaled Bessel I1 (i1e), on MPS."""
import torch

dev = "mps"


def feature(x):
    return torch.special.i1e(x) * x


x = torch.linspace(-5.0, 5.0, 256, device=dev)
out = torch.compile(feature)(x)
print(out[:4].cpu().tolist())

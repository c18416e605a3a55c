"""GELU then a one-step left pad of a bfloat16 activation, compiled with torch.compile on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"


@torch.compile
def gelu_then_pad(x):
    return F.pad(F.gelu(x), [1, 0])


x = torch.randn(4, 16, device=dev, dtype=torch.bfloat16)
print(gelu_then_pad(x).shape)  # Mac raises here

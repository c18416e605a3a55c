"""GELU: the fused CUDA kernel when it was built, else plain PyTorch."""

import torch

try:  # built by setup.py on the GPU server; absent on a Mac or a fresh checkout
    import fused_gelu_cuda
except ImportError:
    fused_gelu_cuda = None


def gelu(x: torch.Tensor) -> torch.Tensor:
    if fused_gelu_cuda is not None and x.is_cuda and not x.requires_grad:
        return fused_gelu_cuda.fused_gelu(x)
    return torch.nn.functional.gelu(x, approximate="tanh")

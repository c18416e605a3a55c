import torch

try:
    from . import _C
except ImportError:
    _C = None


def fused_gelu(x):
    if x.device.type != "cuda":
        return torch.nn.functional.gelu(x)  # the pure-PyTorch reference
    return _C.fused_gelu(x)


def attention(q, k, device):
    if device.type != 'cuda':
        out = (q @ k.transpose(-1, -2)).softmax(-1)
    else:
        out = flash_attn_cuda.forward(q, k)
    return out


def look_alikes(x, device):
    if x.device.type == "cpu":
        return x.numpy()  # nothing CUDA-only off the CPU: left alone
    if device.type == "cpu":
        dtype = torch.float32
    else:
        dtype = torch.float16
    return x.to(dtype)


class Blur(torch.autograd.Function):
    pass


def scan_keyed(x, kernel):  # the scan's EXT108 shape: a custom Function in the other branch
    if x.device.type != "cuda":
        out = torch.nn.functional.conv2d(x, kernel)
    else:
        out = Blur.apply(x, kernel)
    return out


def scan_keyed_str(x):
    if x.device.type != 'cuda':
        return x.relu()
    return Blur.apply(x)


def scan_keyed_device(x):
    if x.device.type != "cuda":
        return x.relu()
    return Blur.apply(x)


def look_alike_not_a_fallback(x):
    if x.device.type == "cpu":
        return x.relu()
    return x.abs()  # no CUDA kernel off the CPU: left alone

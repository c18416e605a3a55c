"""torch.compile of a small attention-like function on MPS, with the conda-forge build of torch 2.13.0."""
import torch

dev = "mps"


def attend(a, b):
    return torch.softmax(a @ b.transpose(-1, -2), dim=-1) @ b


fn = torch.compile(attend)
q = torch.randn(1, 4, 256, 64, device=dev)
out = fn(q, q)  # Mac raises here
print(out.shape)

"""torch.compile of an entropy term built on torch.special.entr, on MPS."""
import torch

dev = "mps"


def entropy(p):
    return torch.special.entr(p).sum(-1)


fn = torch.compile(entropy)
p = torch.softmax(torch.randn(4, 10, device=dev), dim=-1)
h = fn(p)  # Mac: compiles and runs on MPS (no error)
print(h.tolist())

"""torch.compile of digamma (polygamma of order 0) applied to an integer count tensor, on MPS."""
import torch

dev = "mps"


def psi(x):
    return torch.special.polygamma(0, x)


counts = torch.tensor([2, 3, 5], device=dev)
fast = torch.compile(psi)
out = fast(counts)  # Mac: wrong result here (-inf instead of digamma), no error
print(out.cpu().tolist())

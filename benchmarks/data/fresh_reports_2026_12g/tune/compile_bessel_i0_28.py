"""torch.compile of a Kaiser window built from the modified Bessel function I0, on MPS."""
import torch

dev = "mps"


def kaiser(x, beta):
    return torch.special.modified_bessel_i0(beta * torch.sqrt(1 - x * x)) / torch.special.modified_bessel_i0(beta)


fn = torch.compile(kaiser)
x = torch.linspace(-1, 1, 64, device=dev)
w = fn(x, torch.tensor(8.0, device=dev))  # Mac: compiles and runs on MPS (no error)
print(w.max().item())

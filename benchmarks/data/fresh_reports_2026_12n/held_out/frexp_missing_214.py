"""torch.frexp (mantissa / exponent split) of a float MPS tensor."""
import torch

dev = "mps"
x = torch.tensor([0.5, 3.0, -10.0, 1024.0], device=dev)
mantissa, exponent = torch.frexp(x)  # Mac raises here
print(mantissa.cpu(), exponent.cpu())

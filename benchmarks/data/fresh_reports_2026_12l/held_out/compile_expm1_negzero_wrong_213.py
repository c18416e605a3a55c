"""torch.compile of expm1 followed by reciprocal on negative-zero inputs on MPS."""
import torch

dev = "mps"


def signed_inverse(x):
    return torch.reciprocal(torch.expm1(x))


x = torch.tensor([-0.0, -0.0, 1.0], device=dev)
eager = signed_inverse(x)
compiled = torch.compile(signed_inverse)(x)  # Mac goes wrong here: +inf where eager gives -inf
print(eager.cpu(), compiled.cpu())

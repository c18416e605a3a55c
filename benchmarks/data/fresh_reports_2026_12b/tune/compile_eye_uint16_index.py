"""A compiled module that builds an identity matrix from the input width (256) and multiplies by it, on MPS."""
import torch
import torch.nn as nn


class WithIdentity(nn.Module):
    def forward(self, state, xi):
        eye = torch.eye(xi.shape[-1], dtype=xi.dtype, device=xi.device)
        return xi + 1, xi @ eye


dev = "mps"
state = torch.zeros(256, device=dev)
xi = torch.zeros(10, 256, device=dev)
step = torch.compile(WithIdentity().eval().to(dev))
with torch.inference_mode():
    nxt, err = step(state, xi)  # Mac raises here
print(nxt.shape, err.shape)

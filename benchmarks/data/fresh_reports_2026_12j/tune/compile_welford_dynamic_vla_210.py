"""A LayerNorm block compiled with dynamic shapes for variable-length batches on MPS."""
import torch
import torch.nn as nn

dev = "mps"
norm = nn.LayerNorm(384).to(dev)
compiled = torch.compile(norm, dynamic=True)
x = torch.randn(6, 37, 384, device=dev)
y = compiled(x)  # Mac raises here (Inductor Metal code for the welford reduction does not compile)
print(y.abs().mean().item())

"""A float8 speed check: cast an MPS matrix to float8_e4m3fn, then multiply back in float32."""
import torch

dev = "mps"
a = torch.randn(256, 256, device=dev)
a8 = a.to(torch.float8_e4m3fn)  # Mac raises here
print((a8.to(torch.float32) @ a).sum().item())

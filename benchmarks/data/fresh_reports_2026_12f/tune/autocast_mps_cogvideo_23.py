"""A sampler step wrapped in torch.autocast on the MPS device."""
import torch

dev = "mps"
latents = torch.randn(2, 64, device=dev)
proj = torch.randn(64, 64, device=dev)
with torch.autocast(device_type=dev, dtype=torch.float16):  # Mac (torch 2.3) raises here
    out = latents @ proj
print(out.dtype)

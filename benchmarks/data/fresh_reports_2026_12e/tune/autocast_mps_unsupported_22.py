"""A rotary-embedding helper that switches autocast off for its own device type, run on MPS during generation."""
import torch

dev = "mps"
inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2, device=dev).float() / 64))
positions = torch.arange(16, device=dev).float()
with torch.autocast(device_type=dev, enabled=False):  # Mac raises here
    freqs = torch.outer(positions, inv_freq)
    cos, sin = freqs.cos(), freqs.sin()
print(cos.shape, sin.shape)

"""Rotary embeddings computed inside a disabled torch.autocast block keyed to the tensor's device type, on MPS."""
import torch

dev = "mps"
inv_freq = 1.0 / (10000 ** (torch.arange(0, 32, 2, device=dev).float() / 32))
positions = torch.arange(16, device=dev).float()
with torch.autocast(device_type=positions.device.type, enabled=False):  # Mac (torch 2.3) raises here
    freqs = torch.outer(positions, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
print(emb.cos().shape)

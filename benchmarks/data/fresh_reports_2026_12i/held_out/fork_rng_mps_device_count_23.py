"""Reproducible augmentation: draw MPS random numbers inside torch.random.fork_rng so the global stream is untouched."""
import torch

dev = "mps"
torch.manual_seed(0)
with torch.random.fork_rng(device_type="mps"):  # Mac raises here
    noise = torch.randn(4, device=dev)
print(noise.tolist())

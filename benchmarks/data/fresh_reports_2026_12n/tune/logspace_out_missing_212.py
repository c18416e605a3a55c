"""torch.logspace created directly on the MPS device (a log-spaced frequency grid)."""
import torch

dev = "mps"
freqs = torch.logspace(0.0, 4.0, steps=16, device=dev)  # Mac raises here
print(freqs.cpu())

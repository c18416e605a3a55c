"""Seeding every RNG for a reproducible run on a Mac, written after the CUDA recipe (manual_seed_all)."""
import random

import torch

dev = "mps"
random.seed(42)
torch.manual_seed(42)
if dev == "mps":
    torch.mps.manual_seed(42)
    torch.mps.manual_seed_all(42)  # Mac raises here
print(torch.rand(2, device=dev))

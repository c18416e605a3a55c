"""Shuffling sample indices with a seeded torch.Generator after torch.set_default_device("mps")."""
import torch

dev = "mps"
torch.set_default_device(dev)
rng = torch.Generator()
rng.manual_seed(0)
order = torch.randperm(60000, generator=rng)  # Mac raises here
print(order[:5])

"""A RandomSampler over a small dataset, iterated after torch.set_default_device("mps")."""
import torch
from torch.utils.data import RandomSampler

dev = "mps"
torch.set_default_device(dev)
sampler = RandomSampler(range(100))
order = list(sampler)  # Mac raises here
print(order[:5])

"""A shuffled DataLoader over token ids after torch.set_default_device("mps")."""
import torch
from torch.utils.data import DataLoader

dev = "mps"
torch.set_default_device(dev)
tokens = torch.arange(64).reshape(16, 4)
loader = DataLoader(tokens, batch_size=4, shuffle=True)
first = next(iter(loader))  # Mac raises here
print(first.shape)

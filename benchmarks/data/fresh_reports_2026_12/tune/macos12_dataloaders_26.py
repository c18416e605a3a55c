"""Dataloaders that place each batch on MPS, run on macOS 12."""
import torch
from torch.utils.data import DataLoader, TensorDataset

dev = "mps"
ds = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
for xb, yb in DataLoader(ds, batch_size=8):
    xb, yb = xb.to(dev), yb.to(dev)  # Mac raises here
    print(xb.shape, yb.shape)
    break

"""A CPU-side DataLoader with pin_memory=True on a Mac where MPS is present: it warns and carries on."""
import torch
from torch.utils.data import DataLoader, TensorDataset

dev = "mps"
data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
loader = DataLoader(data, batch_size=8, pin_memory=(dev != "cpu"))
total = 0.0
for xb, _yb in loader:  # Mac warns here (pinned memory not used on MPS), then completes
    total += xb.sum().item()
print("sum", total)

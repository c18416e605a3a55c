"""A DataLoader with worker processes in a script that has no main guard."""
import torch
from torch.utils.data import DataLoader, TensorDataset

dev = "mps"
data = TensorDataset(torch.arange(8, dtype=torch.float32).unsqueeze(1))
loader = DataLoader(data, batch_size=4, num_workers=1)
(batch,) = next(iter(loader))  # Mac raises here
print(batch.to(dev).sum().item())

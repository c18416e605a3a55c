"""A small denoiser trained from a worker-backed DataLoader, written as a flat script."""
import torch
from torch.utils.data import DataLoader, TensorDataset

dev = "mps"
patches = TensorDataset(torch.randn(16, 1, 4, 4))
model = torch.nn.Conv2d(1, 1, 3, padding=1).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for (x,) in DataLoader(patches, batch_size=8, num_workers=1):  # Mac raises here
    x = x.to(dev)
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("trained")

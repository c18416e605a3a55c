"""One training step of a small MLP on MPS with the fused SGD optimizer."""
import torch
import torch.nn as nn

dev = "mps"
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
loss = model(torch.randn(8, 16, device=dev)).pow(2).mean()
loss.backward()
opt.step()
print(loss.item())

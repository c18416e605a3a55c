"""A training step whose model is on MPS while the collated batch is still on the CPU."""
import torch

dev = "mps"
model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
features = torch.randn(8, 16)  # a collate function that forgot .to(dev)
target = torch.randn(8, 1)
loss = torch.nn.functional.mse_loss(model(features), target)  # Mac raises here
loss.backward()
opt.step()
print(loss.item())

"""A molecular property regressor trained on MPS with targets read as float64 from a CSV column."""
import numpy as np
import torch

dev = "mps"
model = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(dev)
features = torch.randn(8, 32)
targets = torch.tensor(np.random.rand(8, 1))  # float64, as pandas/NumPy hand it over
batch = (features.to(dev), targets.to(dev))  # Mac raises here
loss = torch.nn.functional.mse_loss(model(batch[0]), batch[1].float())
print(loss.item())

"""A trainer that logs the current accelerator index through the torch.mps module."""
import torch

dev = "mps"
model = torch.nn.Linear(4, 4).to(dev)
print("device index:", torch.mps.current_device())  # Mac raises here
print(model(torch.randn(2, 4, device=dev)).sum().item())

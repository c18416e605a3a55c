"""Entering a bfloat16 autocast region with device_type "mps", as a mixed-precision launcher does on a Mac."""
import torch

dev = "mps"
model = torch.nn.Linear(32, 8).to(dev)
x = torch.randn(4, 32, device=dev)
with torch.autocast(device_type=dev, dtype=torch.bfloat16):  # Mac raises here
    y = model(x)
print(y.dtype)

"""A video-transformer wrapper that runs its forward under torch.autocast on the MPS device with bfloat16."""
import torch
import torch.nn as nn

dev = "mps"
block = nn.Linear(128, 128).to(dev)
x = torch.randn(1, 16, 128, device=dev)
with torch.autocast(dev, dtype=torch.bfloat16):  # Mac raises here
    y = block(x)
print(y.dtype)

"""A forward pass under torch.autocast on MPS with float32 as the autocast dtype."""
import torch

dev = "mps"
layer = torch.nn.Linear(8, 4).to(dev)
x = torch.randn(5, 8, device=dev)
with torch.autocast(dev, dtype=torch.float32):  # Mac warns here (autocast disabled), then completes
    y = layer(x)
print(y.dtype, y.shape)

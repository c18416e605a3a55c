"""nn.Upsample followed by a 1x1 Conv1d, compared between the CPU and MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
model = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv1d(3, 3, 1))
x = torch.randn(2, 3, 10)
ref = model(x)
got = model.to(dev)(x.to(dev))  # Mac goes wrong here: differs from the CPU result
print((got.cpu() - ref).abs().max().item())

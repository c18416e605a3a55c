"""Half-precision average pooling with a custom divisor on MPS."""
import torch
import torch.nn as nn

dev = "mps"
pool = nn.AvgPool2d(3, stride=1, padding=1, divisor_override=5)
x = torch.randn(1, 3, 9, 9, device=dev, dtype=torch.float16)
y = pool(x)  # Mac aborts here ('mps.multiply' f16 x f32 divisor)
print(y.float().mean().item())

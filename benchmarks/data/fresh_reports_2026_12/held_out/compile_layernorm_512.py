"""A LayerNorm over 512 features compiled with torch.compile on MPS, against a float64 CPU reference."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
norm = nn.LayerNorm(512)
x = torch.randn(4, 512) * 3
ref = nn.functional.layer_norm(x.double(), (512,), norm.weight.double(), norm.bias.double())
norm = norm.to(dev).eval()
with torch.inference_mode():
    got = torch.compile(norm)(x.to(dev))
print((got.cpu().double() - ref).abs().max().item() < 1e-4)

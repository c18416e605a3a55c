"""A 3-D bfloat16 projection (batch, tokens, features) through F.linear on MPS, run twice on the same input."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
tokens = torch.randn(2, 13, 1024, device=dev, dtype=torch.bfloat16)
weight = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
first = F.linear(tokens, weight).clone()  # Mac: wrong (run-to-run different) values here on an M5, no error
second = F.linear(tokens, weight).clone()
print("run-to-run max difference:", (second - first).abs().max().item())

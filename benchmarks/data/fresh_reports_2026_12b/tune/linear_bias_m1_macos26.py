"""A tiny projection head (2 -> 192 features, with bias) over a batch of 80 single-step inputs on MPS."""
import torch
from torch import nn

dev = "mps"
torch.manual_seed(0)
head_cpu = nn.Linear(2, 192, bias=True)
head = nn.Linear(2, 192, bias=True).to(dev)
head.load_state_dict(head_cpu.state_dict())
feats = torch.randn(80, 1, 2)
ref = head_cpu(feats)
out = head(feats.to(dev)).cpu()  # Mac (M1, macOS 26): wrong result here, no error
print("max relative gap:", ((ref - out).abs().max() / ref.abs().max()).item())

"""A diffusion prior loaded in bfloat16 (torch_dtype=torch.bfloat16) and then moved to MPS."""
import torch
import torch.nn as nn

dev = "mps"
prior = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64)).to(torch.bfloat16)
prior = prior.to(dev)  # Mac raises here
x = torch.randn(2, 64, dtype=torch.bfloat16, device=dev)
print(prior(x).float().mean().item())

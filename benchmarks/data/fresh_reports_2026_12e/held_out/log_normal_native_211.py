"""Filling an MPS tensor in place with log-normal noise."""
import torch

dev = "mps"
torch.manual_seed(0)
x = torch.empty(1000, device=dev)
x.log_normal_(mean=0.0, std=0.5)
print(bool((x > 0).all()), x.mean().item())

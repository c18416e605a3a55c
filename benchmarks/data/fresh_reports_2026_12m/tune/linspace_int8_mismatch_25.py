"""Integer linspace with a fractional start on MPS, compared with the CPU."""
import torch

dev = "mps"
cpu = torch.linspace(4.6, -2, 20, dtype=torch.int8)
mps = torch.linspace(4.6, -2, 20, dtype=torch.int8, device=dev)  # Mac goes silently wrong here
print((cpu != mps.cpu()).sum().item(), "elements differ")

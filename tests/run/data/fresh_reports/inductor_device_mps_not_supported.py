"""A diffusion-style UNet block compiled with torch.compile and run on MPS."""
import torch

dev = "mps"
block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.SiLU()).to(dev)
fast = torch.compile(block)
out = fast(torch.randn(2, 8, device=dev))  # Mac raises here
print(out.shape)

"""A segmentation model run under bfloat16 autocast on MPS."""
import torch

dev = "mps"
net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).to(dev)
with torch.inference_mode(), torch.autocast(dev, dtype=torch.bfloat16):
    out = net(torch.randn(2, 8, device=dev))
print(out.dtype)

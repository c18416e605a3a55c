"""Inference under torch.autocast with device_type "mps", as a portrait-animation node does."""
import torch

dev = "mps"
net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).to(dev)
img = torch.randn(1, 3, 16, 16, device=dev)
with torch.no_grad(), torch.autocast(device_type="mps", dtype=torch.float16):  # Mac raises here
    out = net(img)
print(out.dtype, out.shape)

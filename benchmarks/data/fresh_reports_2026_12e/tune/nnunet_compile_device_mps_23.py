"""A small 3-D segmentation block wrapped in torch.compile (default Inductor backend) and run on MPS."""
import torch
import torch.nn as nn

dev = "mps"
net = nn.Sequential(
    nn.Conv3d(1, 8, 3, padding=1),
    nn.InstanceNorm3d(8),
    nn.LeakyReLU(),
    nn.Conv3d(8, 2, 1),
).to(dev)
net = torch.compile(net)
x = torch.randn(2, 1, 16, 16, 16, device=dev)
y = net(x)  # Mac raises here
print(y.shape)

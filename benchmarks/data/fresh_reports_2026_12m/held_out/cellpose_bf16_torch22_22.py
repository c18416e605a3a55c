"""Load a segmentation network whose weights are stored in bfloat16 and move it to the Apple GPU."""
import torch
import torch.nn as nn

dev = torch.device("mps")
net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 1))
net = net.to(torch.bfloat16)
net = net.to(dev)  # Mac raises here
img = torch.rand(1, 3, 64, 64, device=dev, dtype=torch.bfloat16)
print(net(img).shape)

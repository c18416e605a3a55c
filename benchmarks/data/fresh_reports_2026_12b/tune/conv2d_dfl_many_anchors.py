"""A detector's distribution-focal-loss head: a 1x1 Conv2d over (4, anchors) with more than 65536 anchors, on MPS."""
import torch
import torch.nn as nn

dev = "mps"
c1, anchors = 16, 70000
dfl = nn.Conv2d(c1, 1, 1, bias=False).to(dev)
box = torch.randn(1, 4 * c1, anchors, device=dev)
probs = box.view(1, 4, c1, anchors).transpose(2, 1).softmax(1)
dist = dfl(probs).view(1, 4, anchors)  # Mac raises here
print(dist.shape)

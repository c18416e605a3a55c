"""Extract 3x3 patches of a feature map with F.unfold on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
feats = torch.empty(4, 2, 40, 40).to(dev)
cols = F.unfold(feats, kernel_size=3, padding=1, stride=1)  # Mac warns here (aten::im2col falls back to the CPU) and goes on
print(tuple(cols.shape))

"""A 1x1 convolution over the first channels of a channels_last feature map, sliced without .contiguous(), on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
feats = torch.randn(2, 6, 5, 5, device=dev).contiguous(memory_format=torch.channels_last)
head = feats[:, :3]  # channel slice of a channels_last tensor
w = torch.randn(4, 3, 1, 1, device=dev)
out = F.conv2d(head, w)  # Mac goes silently wrong here
print(out.shape, out.abs().mean().item())

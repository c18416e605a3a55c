"""torch.compile of a deformable-attention style sampler (F.grid_sample with zero padding) on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"


def sample(feat, offsets):
    grid = offsets.tanh() * 1.1
    return F.grid_sample(feat, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


feat = torch.randn(2, 8, 16, 16, device=dev)
offsets = torch.randn(2, 10, 4, 2, device=dev)
out = torch.compile(sample)(feat, offsets)  # Mac raises here
print(out.shape)

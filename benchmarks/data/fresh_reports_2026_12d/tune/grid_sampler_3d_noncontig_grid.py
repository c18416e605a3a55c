"""Warping a 3-D feature volume with a flow field permuted into grid layout (non-contiguous) via grid_sample on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
volume = torch.randn(1, 2, 6, 10, 10)
flow = torch.rand(1, 3, 6, 10, 10) * 2 - 1
expected = F.grid_sample(volume, flow.permute(0, 2, 3, 4, 1), align_corners=True)
grid = flow.to(dev).permute(0, 2, 3, 4, 1)  # (N, D, H, W, 3) view, not contiguous
got = F.grid_sample(volume.to(dev), grid, align_corners=True).cpu()  # Mac: wrong result here (grid strides ignored), no error
print("max abs gap:", (expected - got).abs().max().item())

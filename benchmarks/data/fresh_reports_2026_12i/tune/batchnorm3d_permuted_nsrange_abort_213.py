"""BatchNorm3d over a channels-last 5D activation that was permuted into NCDHW without .contiguous(), on MPS."""
import torch
import torch.nn as nn

dev = "mps"
x = torch.randn(4, 6, 5, 8, 51, device=dev).permute(0, 4, 1, 2, 3)  # (N, C=51, D, H, W), non-contiguous
bn = nn.BatchNorm3d(51).to(dev)
out = bn(x)  # Mac aborts here
print(out.shape, out.mean().item())

"""Stretching single-sample signals to length 5 by linear interpolation (align_corners=True) on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
sig = torch.tensor([[[0.5]], [[1.5]], [[-2.0]]])
ref = F.interpolate(sig, size=5, mode="linear", align_corners=True)
got = F.interpolate(sig.to(dev), size=5, mode="linear", align_corners=True)
print(got.cpu().flatten().tolist(), torch.equal(ref, got.cpu()))

"""A 4-bin histogram over [0, 1] on MPS of values that include one just below 0, against the CPU."""
import torch

dev = "mps"
x = torch.tensor([0.1, 0.4, 0.6, 0.9, -1e-6])
ref = torch.histc(x, bins=4, min=0.0, max=1.0)
got = torch.histc(x.to(dev), bins=4, min=0.0, max=1.0)
print(ref.tolist(), got.cpu().tolist(), torch.equal(ref, got.cpu()))

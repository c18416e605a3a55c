"""torch.where with a transposed (non-contiguous) boolean keep-mask on MPS, against the CPU."""
import torch

dev = "mps"
keep = torch.ones(3, 2, dtype=torch.bool).T  # non-contiguous view
vals = torch.tensor([[3, 4, 5], [6, 7, 8]])
ref = torch.where(keep, vals, 0)
got = torch.where(keep.to(dev), vals.to(dev), 0)
print(ref.tolist(), got.cpu().tolist(), torch.equal(ref, got.cpu()))

"""F.max_unpool2d on MPS with an index far outside the 4x4 output plane; the CPU refuses it."""
import torch
import torch.nn.functional as F

dev = "mps"
vals = torch.randn(1, 1, 2, 2, device=dev)
idx = torch.tensor([[[[5000, 3], [8, 15]]]], device=dev)
out = F.max_unpool2d(vals, idx, kernel_size=2, output_size=(4, 4))  # Mac, silently wrong: a tensor comes back, no invalid-index error
print(out.cpu())

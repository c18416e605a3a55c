"""Integer grid distances with torch.hypot on MPS (pixel offsets kept as int64)."""
import torch

dev = "mps"
dx = torch.arange(-3, 4, device=dev)
dy = torch.arange(0, 7, device=dev)
dist = torch.hypot(dx, dy)  # Mac aborts here
print(dist.tolist())

"""Moving a CPU int64 tensor to MPS with non_blocking=True and reading it back."""
import torch

dev = "mps"
src = torch.arange(10)
dst = src.to(dev, non_blocking=True)  # Mac goes silently wrong here
print(dst.cpu().tolist())

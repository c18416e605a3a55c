"""Masking non-finite feature columns of a large table with torch.isfinite on a column slice, on MPS."""
import torch

dev = "mps"
table = torch.zeros(1_500_000, 464, device=dev)
labels = torch.arange(1_500_000, device=dev, dtype=torch.float32)
ok = torch.isfinite(table[:, 4:50])  # Mac: wrong result here (writes past its output, corrupts other buffers), no error
print(ok.all().item(), labels[-1].item())

"""A matmul under torch.autocast("mps", dtype=torch.bfloat16), as in a segmentation model's sample code."""
import torch

dev = "mps"
a = torch.randn(16, 16, device=dev)
b = torch.randn(16, 16, device=dev)
with torch.inference_mode(), torch.autocast(dev, dtype=torch.bfloat16):  # Mac warns here (autocast disabled), then completes
    c = a @ b
print(c.dtype)

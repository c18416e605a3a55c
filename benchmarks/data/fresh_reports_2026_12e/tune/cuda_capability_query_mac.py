"""An attention helper that picks its kernel from the CUDA compute capability at import time, on a Mac."""
import torch
import torch.nn.functional as F

dev = "mps"
major, minor = torch.cuda.get_device_capability(None)  # Mac raises here
use_flash = major >= 8
q = torch.randn(1, 4, 16, 32, device=dev)
out = F.scaled_dot_product_attention(q, q, q)
print(use_flash, out.shape)

"""flex_attention called eagerly inside an MPS autocast region (a video DiT's sparse attention path)."""
import torch
from torch.nn.attention.flex_attention import flex_attention

dev = "mps"
q, k, v = (torch.randn(1, 2, 128, 32, device=dev) for _ in range(3))
with torch.autocast(device_type=dev, dtype=torch.float16):
    out = flex_attention(q, k, v)  # Mac raises here
print(out.shape)

"""torch.compile of scaled_dot_product_attention on bfloat16 inputs (16 heads, 1179 tokens, head size 128), on MPS."""
import torch
from torch.nn.functional import scaled_dot_product_attention as sdpa

dev = "mps"
q, k, v = (torch.randn(1, 1179, 16, 128, device=dev, dtype=torch.bfloat16).transpose(1, 2) for _ in range(3))
out = torch.compile(sdpa)(q, k, v)
print(out.shape, out.dtype)

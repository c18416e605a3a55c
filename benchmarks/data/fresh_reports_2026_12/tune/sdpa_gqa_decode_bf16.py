"""One decoding step of grouped-query attention in bfloat16 on MPS, compared with the CPU."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
q = torch.randn(1, 16, 1, 128, dtype=torch.bfloat16)
k = torch.randn(1, 2, 1024, 128, dtype=torch.bfloat16)
v = torch.randn(1, 2, 1024, 128, dtype=torch.bfloat16)
ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=True)
got = F.scaled_dot_product_attention(q.to(dev), k.to(dev), v.to(dev), enable_gqa=True)
print((got.float().cpu() - ref).abs().max().item() < 2e-2)

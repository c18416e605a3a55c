"""Attention over a padded batch where one query row may attend to nothing, MPS against the CPU."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 3, 8) for _ in range(3))
mask = torch.tensor([[False, False, False], [True, True, False], [True, True, True]])
ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
got = F.scaled_dot_product_attention(q.to(dev), k.to(dev), v.to(dev), attn_mask=mask.to(dev))
print(torch.isnan(got).any().item(), torch.allclose(ref, got.cpu(), atol=1e-5))

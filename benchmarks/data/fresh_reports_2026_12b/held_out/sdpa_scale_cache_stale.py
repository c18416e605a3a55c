"""Two scaled_dot_product_attention calls on the same MPS tensors, the second with an explicit scale."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(3)
q = torch.randn(1, 2, 4, 8, device=dev)
default_scale = F.scaled_dot_product_attention(q, q, q)
custom_scale = F.scaled_dot_product_attention(q, q, q, scale=2.0)  # Mac: wrong result here (cached scale reused), no error
print("outputs identical (should be False):", torch.allclose(default_scale, custom_scale))

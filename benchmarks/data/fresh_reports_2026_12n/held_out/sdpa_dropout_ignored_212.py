"""F.scaled_dot_product_attention on MPS with dropout_p=0.5 (training-time attention dropout)."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
q = torch.randn(1, 2, 16, 8, device=dev)
k = torch.randn(1, 2, 16, 8, device=dev)
v = torch.randn(1, 2, 16, 8, device=dev)
plain = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
dropped = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)  # Mac, silently wrong: no dropout applied, same output as dropout_p=0.0
print(torch.equal(plain.cpu(), dropped.cpu()))

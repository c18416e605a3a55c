"""A text-encoder LayerNorm whose parameters stayed float32 while the hidden states run in float16, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
hidden = torch.randn(1, 77, 768, dtype=torch.float16, device=dev)
weight = torch.ones(768, device=dev)  # float32 parameters
bias = torch.zeros(768, device=dev)
out = F.layer_norm(hidden, (768,), weight, bias)  # Mac aborts here
print(out.dtype, out.float().abs().mean().item())

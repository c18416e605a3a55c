"""A video-VAE encoder step that flattens a long clip's activations onto one axis before a pointwise op, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
act = torch.zeros(1, 128, 16, 1024, 1025, dtype=torch.float16, device=dev)
flat = act.view(1, -1)
out = F.silu(flat)  # Mac raises here
print(out.shape)

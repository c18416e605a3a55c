"""One step of a small video diffusion model (attention over video tokens, then a 3-D conv decoder) on MPS."""
import torch
import torch.nn as nn
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
latents = torch.randn(1, 64, 4, 16, 16)
proj = nn.Linear(64, 64)
decoder = nn.Conv3d(64, 3, kernel_size=3, padding=1)


def step(z, proj, decoder):
    tok = z.flatten(2).transpose(1, 2)
    tok = tok + F.scaled_dot_product_attention(tok, tok, tok)
    z = proj(tok).transpose(1, 2).reshape_as(z)
    return decoder(z)


ref = step(latents, proj, decoder)
got = step(latents.to(dev), proj.to(dev), decoder.to(dev)).cpu()  # Mac (torch 2.5): wrong result here, no error
print("max gap:", (ref - got).abs().max().item())

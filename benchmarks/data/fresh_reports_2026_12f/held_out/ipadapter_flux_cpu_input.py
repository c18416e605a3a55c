"""An image-prompt adapter projecting CLIP image embeddings that stayed on the CPU through a projection on MPS."""
import torch
import torch.nn as nn

dev = "mps"
proj = nn.Linear(768, 3072).to(dev)
image_embeds = torch.randn(1, 768)  # encoded on the CPU and never moved
tokens = proj(image_embeds)  # Mac raises here
print(tokens.shape)

"""A masking schedule computed in float64 and moved to MPS for a diffusion language model."""
import torch

dev = "mps"
steps = torch.arange(1, 17, dtype=torch.float64)
ratio = torch.cos(steps / 16 * torch.pi / 2)
ratio = ratio.to(dev)  # Mac raises here
tokens = torch.randint(0, 100, (1, 32), device=dev)
print(ratio.shape, tokens.shape)

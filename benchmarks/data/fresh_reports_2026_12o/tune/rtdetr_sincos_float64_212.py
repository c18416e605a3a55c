"""2-D sin-cos position embeddings for a detector encoder, built on the feature map's device with float64 intermediates."""
import torch

dev = "mps"
pos_dim, height, width = 32, 20, 24
omega = torch.arange(pos_dim, dtype=torch.float64, device=dev) / pos_dim  # Mac raises here
omega = 1.0 / (10000 ** omega)
ys = torch.arange(height, dtype=torch.float64, device=dev)
xs = torch.arange(width, dtype=torch.float64, device=dev)
gy, gx = torch.meshgrid(ys, xs, indexing="ij")
emb = torch.cat([(gx.flatten()[:, None] * omega).sin(), (gy.flatten()[:, None] * omega).cos()], dim=1)
print(emb.float().shape)

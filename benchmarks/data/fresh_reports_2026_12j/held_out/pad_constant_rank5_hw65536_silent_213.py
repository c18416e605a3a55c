"""Causal temporal padding of a video latent (N, C, T, H, W) before a 3-D conv, as a video VAE does."""
import torch
import torch.nn.functional as F

dev = "mps"
frames = torch.randn(1, 1, 4, 64, 1024, device=dev)
padded = F.pad(frames, (0, 0, 0, 0, 2, 0))  # Mac: most values wrong here (H*W = 65536, rank 5), no error
print(tuple(padded.shape), padded[0, 0, 2:].abs().mean().item())

"""Flattening a large batch of decoded float16 video frames into one vector on MPS before clamping it."""
import torch

dev = "mps"
frames = torch.empty(16, 3, 6400, 7000, dtype=torch.float16, device=dev)
flat = frames.view(-1)  # 2,150,400,000 elements, more than INT_MAX
pixels = flat.clamp(0.0, 1.0)  # Mac raises here
print(pixels.numel())

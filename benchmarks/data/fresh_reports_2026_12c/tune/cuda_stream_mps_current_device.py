"""Preprocessing wrapped in torch.cuda.stream(...) with no CUDA stream (None) on a Mac."""
import torch

dev = "mps"
pre_stream = torch.cuda.Stream() if torch.cuda.is_available() else None
frame = torch.zeros(720, 1280, 3, dtype=torch.uint8)
with torch.cuda.stream(pre_stream):  # Mac raises here
    x = frame.to(dev).permute(2, 0, 1).float().div(255)
print(x.shape)

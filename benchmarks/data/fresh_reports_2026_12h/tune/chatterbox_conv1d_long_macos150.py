"""A vocoder's output Conv1d over a 3 s, 24 kHz signal on MPS (macOS 15.0)."""
import torch
import torch.nn as nn

dev = "mps"
post = nn.Conv1d(32, 1, kernel_size=7, padding=3).to(dev)
hidden = torch.randn(1, 32, 72000, device=dev)
wav = torch.tanh(post(hidden))  # Mac raises here
print(wav.shape)

"""An audio VAE block (Conv1d) applied to a long waveform buffer (length above 65536) on MPS."""
import torch
import torch.nn as nn

dev = "mps"
block = nn.Sequential(nn.Conv1d(1, 8, kernel_size=7, padding=3), nn.ELU()).to(dev)
wave = torch.randn(1, 1, 96000, device=dev)
feats = block(wave)  # Mac raises here
print(feats.shape)

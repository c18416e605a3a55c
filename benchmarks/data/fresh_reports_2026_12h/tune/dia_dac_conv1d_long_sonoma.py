"""Last Conv1d of an audio-codec decoder over a long latent sequence, on MPS (macOS Sonoma)."""
import torch
import torch.nn as nn

dev = "mps"
decoder_tail = nn.Sequential(nn.Conv1d(64, 1, kernel_size=7, padding=3), nn.Tanh()).to(dev)
latent = torch.randn(1, 64, 88200, device=dev)  # about 2 s of 44.1 kHz samples
audio = decoder_tail(latent)  # Mac raises here
print(audio.shape)

"""Text-to-speech inference: a speaker embedding built on the CPU is fed to a decoder layer that lives on MPS."""
import torch
import torch.nn as nn

dev = "mps"
decoder = nn.Linear(256, 80).to(dev)
speaker_emb = torch.randn(1, 256)  # created without device=, so on the CPU
mel = decoder(speaker_emb)  # Mac raises here
print(mel.shape)

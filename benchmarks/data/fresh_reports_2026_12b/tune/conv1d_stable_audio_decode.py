"""A decoder's final Conv1d over a long audio latent (output length above 65536) on MPS."""
import torch
import torch.nn as nn

dev = "mps"
head = nn.Conv1d(4, 2, kernel_size=1).to(dev)
latent = torch.randn(1, 4, 70000, device=dev)
audio = head(latent)  # Mac raises here
print(audio.shape)

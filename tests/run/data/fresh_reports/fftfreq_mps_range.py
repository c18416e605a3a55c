"""The frequency axis of a long FFT, generated directly on MPS."""
import torch

dev = "mps"
freq = torch.fft.fftfreq(10000, device=dev)
print(freq.min().item(), freq.max().item())

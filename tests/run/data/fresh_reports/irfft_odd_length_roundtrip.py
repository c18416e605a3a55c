"""A real FFT round trip of an odd-length signal on MPS (irfft of rfft should be the identity)."""
import torch

dev = "mps"
sig = torch.linspace(0, 1, 7, device=dev)
back = torch.fft.irfft(torch.fft.rfft(sig), sig.numel())
print((back - sig).abs().max().item())

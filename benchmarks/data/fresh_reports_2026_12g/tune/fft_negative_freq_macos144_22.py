"""Two-sided FFT of a real signal on MPS, compared against the CPU."""
import torch

dev = "mps"
signal = torch.sin(torch.linspace(0, 20, 64)) + 0.1 * torch.arange(64.0) / 64
expected = torch.fft.fft(signal)
got = torch.fft.fft(signal.to(dev)).cpu()  # Mac: wrong result here on macOS 14.4 (negative frequencies dropped), no error
print("max abs gap:", (expected - got).abs().max().item())

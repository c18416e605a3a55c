"""Real FFT and back (rfft -> irfft) of a 64-sample signal on MPS, compared with the input."""
import torch

dev = "mps"
signal = torch.rand(64)
spec = torch.fft.rfft(signal.to(dev))
back = torch.fft.irfft(spec, n=64).cpu()  # Mac: wrong values here on macOS 14.4, no error
print("round-trip max error:", (back - signal).abs().max().item())

"""Backprop through a reflect-padded waveform longer than 65536 samples (as torch.stft(center=True) does)."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
wave = torch.randn(1, 70000, device=dev, requires_grad=True)
padded = F.pad(wave, (256, 256), mode="reflect")
weights = torch.rand_like(padded)
(padded * weights).sum().backward()  # Mac: wave.grad wrong from index 4464 on, no error
print("grad norm:", wave.grad.norm().item())

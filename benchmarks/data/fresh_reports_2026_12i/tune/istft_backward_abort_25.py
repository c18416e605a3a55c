"""A spectrogram-domain model (STFT -> Conv2d -> ISTFT) trained by backprop on MPS."""
import torch
import torch.nn as nn

dev = "mps"
n_fft, hop = 512, 128
window = torch.hann_window(n_fft, device=dev)
wave = torch.randn(2, 16000, device=dev)
conv = nn.Conv2d(2, 2, 3, padding=1).to(dev)
spec = torch.stft(wave, n_fft, hop, window=window, return_complex=True)
ri = torch.view_as_real(spec).permute(0, 3, 1, 2)
ri = conv(ri).permute(0, 2, 3, 1).contiguous()
out = torch.istft(torch.view_as_complex(ri), n_fft, hop, window=window, length=16000)
loss = (out - wave).pow(2).mean()
loss.backward()  # Mac aborts here
print(loss.item(), conv.weight.grad.abs().sum().item())

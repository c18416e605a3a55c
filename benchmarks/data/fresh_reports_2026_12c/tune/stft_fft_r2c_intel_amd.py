"""Spectrogram of a stereo clip with torch.stft on MPS (Intel Mac with an AMD GPU)."""
import torch

dev = "mps"
audio = torch.randn(2, 44100, device=dev)
window = torch.hann_window(2048, device=dev)
spec = torch.stft(audio, n_fft=2048, hop_length=512, window=window, return_complex=True)  # Mac raises here
print(spec.shape)

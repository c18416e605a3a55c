"""Training step through framed audio (Tensor.unfold) with a backward pass, on MPS."""
import torch

dev = "mps"
mel_proj = torch.nn.Linear(256, 80).to(dev)
audio = torch.randn(1, 24000, device=dev, requires_grad=True)
frames = audio.unfold(-1, 256, 64)
loss = mel_proj(frames).abs().mean()
loss.backward()  # Mac raises here
print(audio.grad.abs().sum().item())

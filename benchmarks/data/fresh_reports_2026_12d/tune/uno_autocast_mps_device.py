"""A diffusion pipeline wrapping its denoiser call in torch.autocast with the latents' device type, run on MPS."""
import torch

dev = "mps"
device = torch.device(dev)
denoiser = torch.nn.Conv2d(4, 4, 3, padding=1).to(device)
latents = torch.randn(1, 4, 32, 32, device=device)
with torch.autocast(device_type=latents.device.type, dtype=torch.bfloat16):  # Mac raises here
    noise_pred = denoiser(latents)
print(noise_pred.shape)

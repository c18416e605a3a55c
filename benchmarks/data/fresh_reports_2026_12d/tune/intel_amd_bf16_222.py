"""Moving a bfloat16 diffusion block to MPS on an Intel Mac with an AMD GPU (PyTorch 2.2.2, the last x86_64 release)."""
import torch

dev = "mps"
unet = torch.nn.Conv2d(4, 4, 3, padding=1).to(torch.bfloat16)
unet = unet.to(dev)  # Mac raises here
print(unet(torch.randn(1, 4, 16, 16, device=dev, dtype=torch.bfloat16)).shape)

"""The time-embedding MLP of an SDXL UNet (nn.Linear at batch size 2) run through MPS on an Intel Mac's AMD GPU."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(320, 1280), nn.SiLU(), nn.Linear(1280, 1280))
t = torch.randn(2, 320)
ref = mlp(t)
got = mlp.to(dev)(t.to(dev)).cpu()  # Mac (Intel + AMD GPU, macOS 15.7.8): wrong result here, no error
print("cosine:", torch.nn.functional.cosine_similarity(ref.flatten(), got.flatten(), dim=0).item())

"""A class-conditioned UNet embedding whose label vector stayed on the CPU while the model is on MPS."""
import torch
import torch.nn as nn

dev = "mps"
time_embed = nn.Sequential(nn.Linear(320, 1280), nn.SiLU(), nn.Linear(1280, 1280)).to(dev)
label_emb = nn.Sequential(nn.Linear(2816, 1280), nn.SiLU(), nn.Linear(1280, 1280)).to(dev)
t_emb = torch.randn(2, 320, device=dev)
y = torch.randn(2, 2816)  # pooled conditioning built on the CPU
emb = time_embed(t_emb)
emb = emb + label_emb(y)  # Mac raises here
print(emb.shape)

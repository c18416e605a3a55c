"""A time-embedding Linear whose bias was left in float16 while its weight and input are float32, on MPS."""
import torch
import torch.nn as nn

dev = "mps"
time_embed = nn.Linear(320, 1280).to(dev)
time_embed.bias.data = time_embed.bias.data.half()
t_emb = torch.randn(2, 320, device=dev)
h = time_embed(t_emb)  # Mac aborts here
print(h.shape)

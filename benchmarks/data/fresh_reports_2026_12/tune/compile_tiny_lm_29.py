"""A tiny decoder block (RMSNorm, causal attention, SiLU MLP) compiled with torch.compile on MPS."""
import torch
import torch.nn as nn
import torch.nn.functional as F

dev = "mps"


class Block(nn.Module):
    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        att = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.out(att.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.norm2(x))


model = torch.compile(Block().to(dev).eval())
with torch.no_grad():
    out = model(torch.randn(2, 16, 64, device=dev))
print(out.shape)

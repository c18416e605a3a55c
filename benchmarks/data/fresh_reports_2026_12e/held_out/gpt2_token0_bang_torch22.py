"""Greedy decoding with a small GPT-2-style model (tied input/output embeddings) on MPS."""
import torch
import torch.nn as nn
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
vocab, d, heads = 512, 64, 4
wte = nn.Embedding(vocab, d).to(dev)
wpe = nn.Embedding(64, d).to(dev)
ln1, ln_f = nn.LayerNorm(d).to(dev), nn.LayerNorm(d).to(dev)
qkv = nn.Linear(d, 3 * d).to(dev)
mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d)).to(dev)
idx = torch.tensor([[50, 7, 300]], device=dev)
with torch.no_grad():
    for _ in range(8):
        T = idx.shape[1]
        x = wte(idx) + wpe(torch.arange(T, device=dev))
        q, k, v = qkv(ln1(x)).split(d, dim=2)
        q, k, v = (t.view(1, T, heads, d // heads).transpose(1, 2) for t in (q, k, v))
        x = x + F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(1, T, d)
        x = x + mlp(x)
        logits = ln_f(x)[:, -1] @ wte.weight.T  # Mac (torch 2.2, macOS 14.4): wrong result here, no error
        idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
print(idx.tolist())

"""A few training steps of a small GPT-style block wrapped in torch.compile on MPS."""
import torch
import torch.nn as nn
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)


class TinyGPT(nn.Module):
    def __init__(self, vocab=256, d=64, heads=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.head = nn.Linear(d, vocab)
        self.heads = heads

    def forward(self, idx):
        x = self.emb(idx)
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.head(x + y.transpose(1, 2).reshape(B, T, C))


model = torch.compile(TinyGPT().to(dev))
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
idx = torch.randint(0, 256, (4, 32), device=dev)
for _step in range(3):
    logits = model(idx)
    loss = F.cross_entropy(logits.view(-1, 256), idx.view(-1))  # Mac: wrong result (NaN loss) here, no error
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

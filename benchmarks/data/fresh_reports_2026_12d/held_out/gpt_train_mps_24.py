"""A few training steps of a tiny GPT-style model on MPS (embeddings, causal self-attention, cross-entropy, AdamW)."""
import torch

dev = "mps"
torch.manual_seed(123)
vocab, ctx, d = 100, 16, 32
emb = torch.nn.Embedding(vocab, d).to(dev)
pos = torch.nn.Embedding(ctx, d).to(dev)
block = torch.nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True).to(dev)
head = torch.nn.Linear(d, vocab).to(dev)
params = [p for m in (emb, pos, block, head) for p in m.parameters()]
opt = torch.optim.AdamW(params, lr=4e-4, weight_decay=0.1)
mask = torch.nn.Transformer.generate_square_subsequent_mask(ctx).to(dev)
for _step in range(3):
    x = torch.randint(0, vocab, (4, ctx), device=dev)
    y = torch.roll(x, -1, dims=1)
    h = block(emb(x) + pos(torch.arange(ctx, device=dev)), src_mask=mask, is_causal=True)
    loss = torch.nn.functional.cross_entropy(head(h).flatten(0, 1), y.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss:", loss.item())

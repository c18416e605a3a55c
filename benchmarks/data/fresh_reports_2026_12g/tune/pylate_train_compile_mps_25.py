"""One training step of a small late-interaction retrieval encoder (token embeddings, MaxSim scores) under torch.compile, on MPS."""
import torch
import torch.nn as nn
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, vocab=1000, d=64, out=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, out)

    def forward(self, ids):
        return F.normalize(self.proj(self.emb(ids)), dim=-1)


model = torch.compile(Encoder().to(dev))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
queries = torch.randint(0, 1000, (4, 8), device=dev)
docs = torch.randint(0, 1000, (4, 16), device=dev)
q_emb = model(queries)  # Mac raises here
d_emb = model(docs)
scores = torch.einsum("qid,pjd->qpij", q_emb, d_emb).amax(-1).sum(-1)
loss = F.cross_entropy(scores, torch.arange(4, device=dev))
loss.backward()
opt.step()
print(loss.item())

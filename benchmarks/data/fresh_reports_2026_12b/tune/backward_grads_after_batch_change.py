"""A small embedding + residual MLP trained one step at batch 64, then one step at batch 8194 x 4 tokens (> 2**15 rows) on MPS."""
import torch
import torch.nn as nn

dev = "mps"


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.block1 = nn.Linear(dim, dim)
        self.block2 = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.emb(tokens)
        h = h + torch.relu(self.block1(h))
        h = h + torch.relu(self.block2(h))
        return self.out(h)


torch.manual_seed(0)
model = TinyLM().to(dev)
loss_fn = nn.CrossEntropyLoss()
for batch in (64, 8194):
    tokens = torch.randint(0, 64, (batch, 4), device=dev)
    model.zero_grad()
    loss = loss_fn(model(tokens).reshape(-1, 64), tokens.reshape(-1))
    loss.backward()  # Mac: wrong result here on the second step (gradients far too large), no error
    print(batch, "loss", round(loss.item(), 4), "grad norm", model.out.weight.grad.norm().item())

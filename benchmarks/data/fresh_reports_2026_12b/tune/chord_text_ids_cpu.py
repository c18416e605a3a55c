"""A text encoder on MPS fed token ids moved to a device attribute that was left at "cpu"."""
import torch
import torch.nn as nn

dev = "mps"


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(1000, 32)
        self.proj = nn.Linear(32, 32)

    def forward(self, ids):
        return self.proj(self.tok(ids))  # Mac raises here


class Wrapper:
    def __init__(self):
        self.device = "cpu"
        self.text_encoder = TextEncoder().to(dev)

    def encode(self, ids):
        return self.text_encoder(ids.to(self.device))


w = Wrapper()
ids = torch.randint(0, 1000, (1, 77))
emb = w.encode(ids)
print(emb.shape)

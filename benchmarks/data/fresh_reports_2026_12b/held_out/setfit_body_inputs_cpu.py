"""A sentence-embedding body on MPS called with tokenized inputs that stayed on the CPU."""
import torch
import torch.nn as nn

dev = "mps"


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(30527, 64)
        self.position_embeddings = nn.Embedding(514, 64)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        return self.word_embeddings(input_ids) + self.position_embeddings(pos)  # Mac raises here


body = Body().to(dev)
batch = {"input_ids": torch.randint(0, 30527, (4, 16))}
emb = body(batch["input_ids"])
print(emb.mean(dim=1).shape)

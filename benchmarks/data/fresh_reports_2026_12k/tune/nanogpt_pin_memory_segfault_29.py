"""A nanoGPT-style batch sampler that builds its token block in pinned memory before moving it to MPS."""
import torch

dev = "mps"
tokens = list(range(1000))
ix = torch.randint(len(tokens) - 65, (8,))
rows = [tokens[i:i + 65] for i in ix.tolist()]
block = torch.tensor(rows, dtype=torch.int64, pin_memory=(dev != "cpu"))  # Mac crashes here
x = block[:, :-1].to(dev, non_blocking=True)
y = block[:, 1:].to(dev, non_blocking=True)
print(x.shape, y.shape)

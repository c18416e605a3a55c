"""A token classifier moved to MPS, fed token ids that were never moved off the CPU."""
import torch

dev = "mps"
vocab, width = 50, 8
model = torch.nn.Sequential(torch.nn.Embedding(vocab, width), torch.nn.Linear(width, 3)).to(dev)
ids = torch.randint(0, vocab, (4, 6))  # the tokenizer's output stays on the CPU
logits = model(ids)  # Mac raises here
print(logits.shape)

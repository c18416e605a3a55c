"""Sampling the next token from a small language model on MPS with prompt ids built on the CPU."""
import torch

dev = "mps"
vocab, dim = 256, 32
embed = torch.nn.Embedding(vocab, dim).to(dev)
head = torch.nn.Linear(dim, vocab).to(dev)
prompt_ids = torch.randint(0, vocab, (2, 12))  # tokenizer output, left on the CPU
hidden = embed(prompt_ids)  # Mac raises here
logits = head(hidden[:, -1])
print(logits.argmax(-1).tolist())

"""Fine-tuning step where the model sits on MPS but the data collator's batch stays on the CPU."""
import torch
import torch.nn as nn

dev = "mps"
model = nn.Sequential(nn.Embedding(1000, 64), nn.Linear(64, 2)).to(dev)
batch = {"input_ids": torch.randint(0, 1000, (4, 16))}  # collated on the CPU, never moved
logits = model(batch["input_ids"])  # Mac raises here
print(logits.shape)

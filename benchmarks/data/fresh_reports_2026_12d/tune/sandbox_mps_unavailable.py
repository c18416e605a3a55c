"""Moving a small model to MPS from a process started inside a sandboxed agent session on a Mac."""
import torch

dev = "mps"
model = torch.nn.Linear(8, 2)
model = model.to(dev)  # Mac raises here
print(next(model.parameters()).device)

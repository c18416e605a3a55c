"""nn.ReLU applied to an empty (zero-row) activation on MPS."""
import torch
import torch.nn as nn

dev = "mps"
act = nn.ReLU()
hidden = torch.zeros(0, 16, device=dev)
out = act(hidden)  # Mac raises here
print(out.shape)

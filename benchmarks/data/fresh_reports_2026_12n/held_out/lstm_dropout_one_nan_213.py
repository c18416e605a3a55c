"""Two-layer nn.LSTM with dropout=1.0 run in training mode on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
lstm = nn.LSTM(input_size=6, hidden_size=5, num_layers=2, dropout=1.0).to(dev)
lstm.train()
seq = torch.randn(7, 3, 6, device=dev)
out, _ = lstm(seq)  # Mac goes silently wrong here: every output is NaN (the CPU gives finite numbers)
print(out.cpu())

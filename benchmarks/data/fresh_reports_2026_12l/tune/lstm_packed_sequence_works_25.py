"""Sparse, zero-padded sequences packed and fed to an LSTM on MPS."""
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

dev = "mps"
torch.manual_seed(0)
samples, steps, feats = 1000, 50, 3
data = torch.zeros(samples, steps, feats)
mask = torch.rand(samples, steps, feats) < 0.05
data[mask] = torch.normal(5.0, 3.0, size=(int(mask.sum()),))
lengths = torch.randint(1, steps + 1, (samples,))
packed = pack_padded_sequence(data, lengths, batch_first=True, enforce_sorted=False)
lstm = nn.LSTM(feats, 16, batch_first=True).to(dev)
out, (h, c) = lstm(packed.to(dev))  # Mac (2.5.1) completes here; older nightlies aborted
print(h.shape)

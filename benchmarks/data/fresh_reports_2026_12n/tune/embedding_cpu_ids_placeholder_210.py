"""An MPS embedding table looked up with decoder start ids made on the CPU (only moved when CUDA is present)."""
import torch
import torch.nn as nn

dev = "mps"
embed = nn.Embedding(100, 16).to(dev)
batch_size = 3
start_ids = torch.zeros(batch_size, 1, dtype=torch.long)
if torch.cuda.is_available():
    start_ids = start_ids.to("cuda")
h = embed(start_ids)  # Mac raises here
print(h.shape)

"""nn.MaxUnpool1d on MPS with an indices tensor one column shorter than the input; the CPU rejects the shapes."""
import torch
import torch.nn as nn

dev = "mps"
unpool = nn.MaxUnpool1d(kernel_size=2, stride=2)
vals = torch.randn(4, 6, device=dev)
idx = torch.zeros(4, 5, dtype=torch.long, device=dev)
out = unpool(vals, idx)  # Mac goes silently wrong here: an output comes back, no shape-mismatch error
print(out.shape)

"""Strided subsampling with a 1x1 max pool (ceil_mode, indices kept) of a 4 x 6 feature map, on MPS."""
import torch
import torch.nn as nn

dev = "mps"
pool = nn.MaxPool2d(kernel_size=1, stride=2, ceil_mode=True, return_indices=True)
fmap = torch.rand(2, 3, 4, 6, device=dev)
out, idx = pool(fmap)  # Mac aborts here
print(out.shape, idx.shape)

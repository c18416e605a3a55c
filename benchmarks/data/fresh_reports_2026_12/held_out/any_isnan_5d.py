"""A NaN guard over a 5-D batch of per-sample scalars on MPS."""
import torch

dev = "mps"
batch = torch.randn(4, 1, 1, 1, 1).to(dev)
if torch.isnan(batch).any():  # Mac aborts here
    print("NaN in batch")
print("checked")

"""torch.isin of an MPS tensor against a single Python number."""
import torch

dev = "mps"
labels = torch.tensor([0, 1, 2, 1, 3], device=dev)
is_one = torch.isin(labels, 1)  # Mac raises here
print(is_one.cpu())

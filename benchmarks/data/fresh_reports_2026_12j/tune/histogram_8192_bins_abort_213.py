"""A fine-grained intensity histogram (8192 bins) of values on MPS."""
import torch

dev = "mps"
values = torch.tensor([0.0, 0.5, 1.0], device=dev)
hist, edges = torch.histogram(values, bins=8192, range=(0.0, 1.0))  # Mac aborts here (SIGABRT, no message)
print(hist.sum().item(), edges.shape)

"""The two best candidates along the leading axis of a 5-D score tensor on MPS."""
import torch

dev = "mps"
scores = torch.randn(6, 3, 2, 4, 2, device=dev)
top = torch.topk(scores, k=2, dim=0)  # Mac aborts here
print(top.values.shape)

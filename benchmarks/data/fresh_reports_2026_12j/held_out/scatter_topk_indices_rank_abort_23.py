"""Mark the top-2 positions per row of a (batch, n, 1) score tensor with scatter_ on MPS."""
import torch

dev = "mps"
scores = torch.rand(10, 100, 1, device=dev)
top = scores.topk(k=2, dim=1).indices
marks = torch.randint(0, 100, (10, 100, 1), device=dev)
marks.scatter_(1, top, 1.0)  # Mac aborts here (MPSNDArrayScatter rank assertion)
print(marks.sum().item())

"""Sum a 5-D tensor with singleton axes over its second-to-last dimension on MPS."""
import torch

dev = "mps"
x = torch.ones(2, 4, 1, 30, 1).to(dev)
s = x.sum(dim=-2)  # Mac aborts here
print(s.shape, s.max().item())

"""Adding an int64 tensor to a float32 tensor with an alpha multiplier, on MPS."""
import torch

dev = "mps"
x = torch.rand(4, device=dev)
offset = torch.tensor([1, 2, 3, 4], device=dev)
y = torch.add(x, offset, alpha=2)  # Mac aborts here
print(y.cpu().tolist())

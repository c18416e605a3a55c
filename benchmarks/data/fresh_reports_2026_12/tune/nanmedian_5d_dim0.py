"""nanmedian over the leading axis of a 5-D tensor with a missing value, on MPS."""
import torch

dev = "mps"
x = torch.randn(4, 2, 3, 2, 5, device=dev)
x[0, 0, 0, 0, 0] = float("nan")
med = torch.nanmedian(x, dim=0, keepdim=True).values  # Mac aborts here
print(med.shape)

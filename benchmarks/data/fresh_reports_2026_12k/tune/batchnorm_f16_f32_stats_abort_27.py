"""Half-precision activations normalized with float32 running statistics (F.batch_norm, eval mode) on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
x = torch.rand(2, 3, 4, dtype=torch.float16, device=dev)
mean = torch.zeros(3, device=dev)
var = torch.ones(3, device=dev)
y = F.batch_norm(x, mean, var)  # Mac aborts here
print(y.dtype)

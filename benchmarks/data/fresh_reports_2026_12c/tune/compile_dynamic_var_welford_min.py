"""A compiled per-row variance with a dynamic row length (torch.compile, dynamic=True), on MPS."""
import torch

dev = "mps"


@torch.compile(dynamic=True)
def row_var(x):
    return x.var(dim=-1)


x = torch.randn(4, 5000, device=dev)
torch._dynamo.mark_dynamic(x, 1)
v = row_var(x)  # Mac raises here
print(v.shape)

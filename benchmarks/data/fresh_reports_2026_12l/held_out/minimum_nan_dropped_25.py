"""torch.minimum of two MPS tensors that each hold one NaN."""
import torch

dev = "mps"
torch.manual_seed(0)
x = torch.rand(32, device=dev)
y = torch.rand(32, device=dev)
x[3] = float("nan")
y[5] = float("nan")
m = torch.minimum(x, y)  # Mac goes wrong here: the NaNs are dropped
print(x.isnan().any().item(), m.isnan().any().item())

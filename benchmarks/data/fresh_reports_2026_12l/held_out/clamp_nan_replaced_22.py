"""torch.clamp of a tensor that holds a NaN, on MPS."""
import torch

dev = "mps"
t = torch.tensor([float("nan"), 1.0, 2.0], device=dev)
both = torch.clamp(t, min=-100, max=100)  # Mac goes wrong here: NaN becomes -100
upper = torch.clamp(t, max=100)
print(both.cpu(), upper.cpu())

"""max / min / amax reductions of a tensor holding a NaN, on MPS (macOS 15)."""
import torch

dev = "mps"
x = torch.tensor([0.5, float("nan"), 2.0, -1.0], device=dev)
print(torch.max(x).item(), torch.min(x).item(), torch.amax(x).item())

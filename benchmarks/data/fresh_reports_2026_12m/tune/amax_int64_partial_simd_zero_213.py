"""Maximum of a small all-negative int64 tensor on MPS."""
import torch

dev = "mps"
x = -torch.arange(1, 41, dtype=torch.int64, device=dev)
m = torch.amax(x)  # Mac goes silently wrong here (returns 0, CPU gives -1)
print(m.item())

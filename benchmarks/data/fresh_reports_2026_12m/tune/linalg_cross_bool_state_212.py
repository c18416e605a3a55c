"""Cross product of two boolean 3-vectors on MPS."""
import torch

dev = "mps"
a = torch.tensor([True, False, True], device=dev)
b = torch.tensor([False, True, True], device=dev)
c = torch.linalg.cross(a, b)  # Mac raises here
print(c)

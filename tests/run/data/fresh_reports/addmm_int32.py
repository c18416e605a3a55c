"""An integer bias-plus-matmul (addmm) on int32 MPS tensors."""
import torch

dev = "mps"
m = torch.arange(4, dtype=torch.int32, device=dev).reshape(2, 2)
acc = torch.addmm(m, m, m)  # Mac raises here
print(acc)

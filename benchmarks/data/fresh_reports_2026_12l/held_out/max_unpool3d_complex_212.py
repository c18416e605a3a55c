"""nn.functional.max_unpool3d of a complex64 input on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
vals = torch.randn(1, 5, 5, 2, dtype=torch.complex64, device=dev)
idx = torch.zeros(1, 5, 5, 2, dtype=torch.int64, device=dev)
out = F.max_unpool3d(vals, idx, kernel_size=1, stride=2, output_size=(9, 10, 4))  # Mac raises here
print(out.shape)

"""logaddexp2 of a complex64 row broadcast against a complex64 column on MPS."""
import torch

dev = "mps"
row = torch.randn(1, 4, dtype=torch.complex64, device=dev)
col = torch.randn(3, 1, dtype=torch.complex64, device=dev)
out = torch.logaddexp2(row, col)  # Mac raises here
print(out.shape)

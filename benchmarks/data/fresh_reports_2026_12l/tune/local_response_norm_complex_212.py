"""nn.functional.local_response_norm on a complex64 MPS input."""
import torch
import torch.nn.functional as F

dev = "mps"
x = torch.randn(1, 4, 6, 6, dtype=torch.complex64, device=dev)
y = F.local_response_norm(x, size=2)  # Mac raises here
print(y.shape)

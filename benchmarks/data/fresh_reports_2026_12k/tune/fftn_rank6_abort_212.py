"""A 2-D FFT over two inner axes of a rank-6 complex64 tensor on MPS."""
import torch

dev = "mps"
z = torch.randn(2, 3, 2, 2, 4, 4, dtype=torch.complex64, device=dev)
spec = torch.fft.fftn(z, dim=(1, 2), norm="forward")  # Mac aborts here
print(spec.shape)

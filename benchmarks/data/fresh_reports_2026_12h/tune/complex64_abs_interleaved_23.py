"""Magnitude of a complex64 spectrum with Tensor.abs() on MPS."""
import torch

dev = "mps"
spec = torch.tensor([3.0 + 4.0j, 0.0 + 2.0j, 1.0 - 1.0j, 6.0 + 8.0j], device=dev)
mag = spec.abs()  # Mac: wrong result here (zeros interleaved, values shifted), no error
print(mag.cpu().tolist())

"""Turning a real MPS tensor into a complex one by multiplying it with 1j (a phase factor)."""
import torch

dev = "mps"
real = torch.rand(3, 4, device=dev)
phase = real * 1j  # Mac raises here
print(phase.dtype, phase.abs().sum().item())

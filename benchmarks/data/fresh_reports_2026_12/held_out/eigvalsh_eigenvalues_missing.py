"""The spectra of a batch of symmetric Hamiltonians via torch.linalg.eigvalsh on MPS."""
import torch

dev = "mps"
h = torch.randn(8, 6, 6, device=dev)
h = (h + h.transpose(-1, -2)) / 2
energies = torch.linalg.eigvalsh(h)  # Mac raises here
print(energies.shape)

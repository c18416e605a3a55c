"""Band-split source separation: complex STFT bins scattered back into place on MPS."""
import torch

dev = "mps"
spec = torch.randn(2, 10, dtype=torch.complex64, device=dev)
bands = torch.randn(2, 4, dtype=torch.complex64, device=dev)
where = torch.tensor([[0, 3, 5, 9], [1, 2, 6, 8]], device=dev)
spec = spec.scatter(1, where, bands)  # Mac raises here
print(spec.abs().sum().item())

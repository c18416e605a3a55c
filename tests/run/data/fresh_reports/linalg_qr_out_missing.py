"""An orthogonal-projection preprocessing step that calls torch.linalg.qr on MPS."""
import torch

dev = "mps"
basis = torch.randn(6, 3, device=dev)
q, r = torch.linalg.qr(basis)  # Mac raises here
print(q.shape, r.shape)

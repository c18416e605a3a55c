"""sigmoid called on an int64 mask tensor on MPS (the aten op, as an exporter calls it)."""
import torch

dev = "mps"
mask = torch.ones((2, 3), dtype=torch.int64, device=dev)
gate = torch.ops.aten.sigmoid(mask)  # Mac raises here
print(gate)

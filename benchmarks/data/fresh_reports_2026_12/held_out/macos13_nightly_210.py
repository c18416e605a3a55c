"""Moving a small integer tensor to MPS on macOS 13."""
import torch

dev = "mps"
counts = torch.tensor([[1, 2], [3, 4]])
counts = counts.to(dev)  # Mac raises here
print(counts.sum().item())

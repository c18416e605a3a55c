"""A masked binary cross-entropy whose mask selects nothing in this batch, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
logits = torch.randn(8, device=dev)
target = torch.zeros(8, device=dev)
keep = logits > 1e9
loss = F.binary_cross_entropy_with_logits(logits[keep], target[keep])  # Mac: wrong result here (0 instead of nan)
print(loss.item())

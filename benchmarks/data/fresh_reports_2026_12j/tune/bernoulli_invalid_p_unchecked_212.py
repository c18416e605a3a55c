"""Sample a Bernoulli mask from probabilities that drifted out of [0, 1] during training."""
import torch

dev = "mps"
probs = torch.tensor([0.5, 1.5, -0.3, float("nan"), float("inf")], device=dev)
mask = torch.bernoulli(probs)  # Mac: silently returns samples here; the CPU rejects p outside [0, 1]
print(mask.tolist())

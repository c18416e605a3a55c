"""An image-generation scheduler computing multistep coefficients with torch.linalg.solve on MPS."""
import torch

dev = "mps"
steps = torch.tensor([1.0, 0.8, 0.6], device=dev)
vander = torch.stack([steps ** p for p in range(3)], dim=1)
target = torch.tensor([1.0, 0.5, 1.0 / 3.0], device=dev)
weights = torch.linalg.solve(vander.t(), target)  # Mac raises here
print(weights.tolist())

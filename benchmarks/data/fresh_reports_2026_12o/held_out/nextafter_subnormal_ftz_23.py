"""The smallest subnormal step from zero (torch.nextafter) compared against 0 on MPS."""
import torch

dev = "mps"
zero = torch.zeros(2, device=dev)
toward = torch.tensor([1.0, -1.0], device=dev)
step = torch.nextafter(zero, toward)
signs = torch.stack([step > 0, step < 0]).cpu()  # Mac goes silently wrong here
print(step.cpu(), signs)

"""A depth model wrapper that moves a float64 tensor of camera intrinsics to the MPS device."""
import torch

dev = "mps"
intrinsics = torch.tensor([[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]], dtype=torch.float64)
depth = torch.rand(1, 1, 48, 64, device=dev)
k = intrinsics.to(dev)  # Mac raises here
print((depth * k[0, 0]).mean().item())

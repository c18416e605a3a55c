"""Image registration step: warp a moving image with a learnable affine grid on MPS and backpropagate."""
import torch
import torch.nn.functional as F

dev = "mps"
moving = torch.rand(1, 1, 32, 32, device=dev)
fixed = torch.rand(1, 1, 32, 32, device=dev)
theta = torch.tensor([[[1.0, 0.0, 0.05], [0.0, 1.0, -0.05]]], device=dev, requires_grad=True)
grid = F.affine_grid(theta, moving.shape, align_corners=False)
warped = F.grid_sample(moving, grid, align_corners=False)
loss = (warped - fixed).pow(2).mean()
loss.backward()  # Mac raises here
print(theta.grad)

"""Integrated-gradients style step weights built with NumPy (float64) and moved to the MPS device of the gradients."""
import numpy as np
import torch

dev = "mps"
n_steps = 8
_, weights = np.polynomial.legendre.leggauss(n_steps)
step_sizes = list(0.5 * weights)
grads = torch.randn(n_steps, 4, device=dev)
scaled = grads * torch.tensor(step_sizes).view(n_steps, 1).to(grads.device)  # Mac raises here
print(scaled.sum(0).cpu())

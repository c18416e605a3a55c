"""A neuron group's membrane vector initialised through NumPy (float64) and moved to MPS."""
import numpy as np
import torch

dev = "mps"
voltage = torch.from_numpy(np.full(100, 0.7))
voltage = voltage.to(dev)  # Mac raises here
print(voltage.mean().item())

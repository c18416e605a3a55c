"""A backend converts a NumPy array (float64 by default) straight onto the MPS device."""
import numpy as np
import torch

dev = torch.device("mps")
x = np.random.uniform(size=[1, 2, 3])
t = torch.as_tensor(x, device=dev)  # Mac raises here
print(t.dtype)

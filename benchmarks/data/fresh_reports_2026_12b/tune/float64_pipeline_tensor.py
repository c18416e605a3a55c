"""A feature-extraction step that builds a float64 tensor from numpy and sends it to the pipeline's MPS device."""
import numpy as np
import torch

dev = "mps"
features = np.random.rand(2, 10)
batch = torch.from_numpy(features)
inputs = batch.to(dev)  # Mac raises here
print(inputs.sum().item())

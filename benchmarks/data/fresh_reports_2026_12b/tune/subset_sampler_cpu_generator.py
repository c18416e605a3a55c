"""A data loader whose SubsetRandomSampler gets a default (CPU) torch.Generator while the default device is MPS."""
import torch
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

dev = "mps"
torch.set_default_device(dev)
data = TensorDataset(torch.arange(20.0).unsqueeze(1))
rng = torch.Generator()
sampler = SubsetRandomSampler(list(range(16)), generator=rng)
loader = DataLoader(data, batch_size=4, sampler=sampler)
first = next(iter(loader))  # Mac raises here
print(first[0].shape)

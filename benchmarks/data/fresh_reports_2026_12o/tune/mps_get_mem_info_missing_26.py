"""A trainer's memory logger asking torch.mps for total memory via get_mem_info()."""
import torch

dev = "mps"
x = torch.zeros(1024, 1024, device=dev)
total = torch.mps.get_mem_info()[0]  # Mac raises here
print(x.numel(), total)

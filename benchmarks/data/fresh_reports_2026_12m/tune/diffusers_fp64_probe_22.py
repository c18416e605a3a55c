"""A test helper probes float64 support by moving a double tensor to the test device (MPS on a Mac)."""
import torch

torch_device = "mps"


def fp64_available(device):
    x = torch.zeros((2, 2), dtype=torch.float64).to(device)  # Mac raises here
    return x.sum().item() == 0


print(fp64_available(torch_device))

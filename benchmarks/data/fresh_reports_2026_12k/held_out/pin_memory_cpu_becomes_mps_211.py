"""A pinned host staging buffer, expected to live on the CPU, allocated on a Mac where MPS is the accelerator."""
import torch

dev = "mps"
staging = torch.empty((4, 3), device="cpu", pin_memory=(dev != "cpu"))
assert staging.device == torch.device("cpu"), staging.device  # Mac raises here
batch = staging.fill_(1.0).to(dev, non_blocking=True)
print(batch.sum().item())

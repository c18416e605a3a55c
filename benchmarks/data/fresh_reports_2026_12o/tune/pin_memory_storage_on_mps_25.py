"""Pinning a CPU frame batch before a non_blocking copy to the GPU (a video predictor's frame loader) on a Mac."""
import torch

dev = "mps"
frames = torch.rand(4, 3, 64, 64)
if dev != "cpu":  # the Linux CPU check has no accelerator to pin for
    frames = frames.pin_memory()  # Mac raises here
batch = frames.to(dev, non_blocking=True)
print(batch.shape)

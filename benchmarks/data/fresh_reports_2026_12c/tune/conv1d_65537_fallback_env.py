"""A Conv1d with 65537 output channels on MPS, with PYTORCH_ENABLE_MPS_FALLBACK=1 set."""
import os

os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

dev = "mps"
torch.manual_seed(0)
conv = nn.Conv1d(1, 65537, 3, padding=1).to(dev)
y = conv(torch.ones(1, 1, 3, device=dev))  # Mac raises here
print(y.shape)

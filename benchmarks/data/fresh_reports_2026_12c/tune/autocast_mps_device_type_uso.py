"""Running a text encoder under torch.autocast with the device type taken from the MPS device."""
import torch

dev = "mps"
enc = torch.nn.Linear(32, 32).to(dev)
tokens = torch.randn(1, 32, device=dev)
with torch.autocast(device_type=torch.device(dev).type, dtype=torch.float16):  # Mac raises here
    emb = enc(tokens)
print(emb.dtype)

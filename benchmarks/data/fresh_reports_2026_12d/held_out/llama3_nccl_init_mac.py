"""A single-process chat example that initialises an NCCL process group before putting the model on MPS."""
import os

import torch
import torch.distributed as dist

dev = "mps"
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29511")
dist.init_process_group("nccl", rank=0, world_size=1)  # Mac raises here
model = torch.nn.Linear(16, 16).to(dev)
print(model(torch.randn(2, 16, device=dev)).shape)
dist.destroy_process_group()

"""Saving a model's state dict while it lives on MPS, then loading that checkpoint back on the Mac."""
import io

import torch
import torch.nn as nn

dev = "mps"
model = nn.Linear(8, 4).to(dev)
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
state = torch.load(buf)
model.load_state_dict(state)
print({k: v.device.type for k, v in state.items()})

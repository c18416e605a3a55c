"""A small time-series mixer on MPS evaluated with a batch of past values built on the CPU."""
import torch
import torch.nn as nn

dev = "mps"


class PatchMixer(nn.Module):
    def __init__(self, patch=8, d_model=16):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch, d_model)
        self.mix = nn.Linear(d_model, d_model)

    def forward(self, past_values):
        b, length, ch = past_values.shape
        patches = past_values.permute(0, 2, 1).reshape(b, ch, length // self.patch, self.patch)
        return self.mix(torch.relu(self.embed(patches)))  # Mac raises here


model = PatchMixer().to(dev).eval()
past = torch.randn(2, 64, 3)
with torch.no_grad():
    out = model(past)
print(out.shape)

"""A model keeps a float64 lookup buffer; the trainer moves it to the accelerator it picks (MPS on a Mac)."""
import torch
import torch.nn as nn


class MassEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scales", torch.linspace(0.001, 10000.0, 16, dtype=torch.float64))
        self.proj = nn.Linear(16, 8)

    def forward(self, mz):
        return self.proj(torch.sin(mz[:, None] / self.scales).float())


dev = "mps"
model = MassEncoder().to(dev)  # Mac raises here
print(model(torch.rand(4, device=dev) * 1000).shape)

"""A prediction model whose normalisation statistic is a float64 buffer, moved to MPS as a whole."""
import torch
import torch.nn as nn

dev = "mps"


class Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(1, 2, 3, padding=1)
        self.register_buffer("data_mean", torch.tensor([0.5], dtype=torch.float64))

    def forward(self, x):
        return self.net(x - self.data_mean.float())


model = Predictor().to(dev)  # Mac raises here
print(model(torch.rand(1, 1, 8, 8, device=dev)).shape)

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.scale = torch.ones(2).cuda()

    def forward(self, x):
        mask = torch.ones(x.shape[1]).cuda()
        return self.fc(x * mask) * self.scale

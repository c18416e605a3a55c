"""A tabular encoder that keeps a feature-grouping matrix as a plain tensor attribute, moved to MPS with .to()."""
import torch
import torch.nn as nn

dev = "mps"


class Encoder(nn.Module):
    def __init__(self, n_features=4, n_groups=4):
        super().__init__()
        self.group_matrix = torch.eye(n_groups, n_features)  # plain attribute: not moved by .to()
        self.fc = nn.Linear(n_groups, 5)

    def forward(self, x):
        grouped = torch.mm(x, self.group_matrix.T)  # Mac raises here
        return self.fc(grouped)


enc = Encoder().to(dev)
x = torch.randn(2, 4, device=dev)
print(enc(x).shape)

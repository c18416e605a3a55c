import torch


def make_grid(res, device='cuda'):
    return torch.linspace(0, 1, res, device=device)

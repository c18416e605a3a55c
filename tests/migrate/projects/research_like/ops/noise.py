import torch


def noise(n):
    return torch.randn(n).cuda()

import numpy as np
import torch


def features(dev):
    table = np.random.rand(100, 3)
    feats = torch.from_numpy(table).float().to(dev)
    raw = torch.from_numpy(table).to(dev)  # float64 kept on the device: listed for the user
    ok = torch.from_numpy(table).float().to(dev)
    return feats, raw, ok

import torch
from torch.utils.data import DataLoader


def loaders(ds, args, device):
    train = DataLoader(ds, batch_size=32, pin_memory=torch.cuda.is_available())
    test = DataLoader(ds, pin_memory=False)
    other = DataLoader(ds, pin_memory=args.pin)
    if device.type == "cuda":
        x = ds[0].pin_memory()  # already only on CUDA
    return train, test, other

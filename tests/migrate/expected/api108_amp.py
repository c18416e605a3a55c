import torch
from torch.amp import GradScaler, autocast


def train(model, x, args, device):
    scaler = GradScaler('cuda', enabled=args.amp)
    with autocast('cuda'):
        loss = model(x)
    with torch.amp.autocast('cuda', enabled=True, dtype=torch.float16):
        loss = loss + model(x)
    return scaler.scale(loss)


def other(model, x):
    s1 = torch.amp.GradScaler('cuda', 2.0**16)
    s2 = torch.amp.GradScaler()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return model(x), s1, s2


def look_alikes(model, x, device):
    with torch.amp.autocast(device_type=device.type):
        y = model(x)
    with torch.autocast("cpu"):
        return y + model(x)

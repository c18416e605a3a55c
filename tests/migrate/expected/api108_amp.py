import torch
from torch.amp import GradScaler, autocast


def _mpsready_device(index=None):
    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""
    if torch.cuda.is_available():
        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")  # mpsready: ignore[API103]
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def train(model, x, args, device):
    scaler = GradScaler(torch.device(device).type, enabled=args.amp and torch.device(device).type == 'cuda')
    with autocast(torch.device(device).type, enabled=torch.device(device).type == 'cuda'):
        loss = model(x)
    with torch.amp.autocast(torch.device(device).type, enabled=torch.device(device).type == 'cuda', dtype=torch.float16):
        loss = loss + model(x)
    return scaler.scale(loss)


def other(model, x):
    s1 = torch.amp.GradScaler(_mpsready_device().type, 2.0**16, enabled=_mpsready_device().type == 'cuda')
    s2 = torch.amp.GradScaler(_mpsready_device().type, enabled=_mpsready_device().type == 'cuda')
    with torch.autocast(_mpsready_device().type, dtype=torch.bfloat16, enabled=_mpsready_device().type == 'cuda'):
        return model(x), s1, s2


def look_alikes(model, x, device):
    with torch.amp.autocast(device_type=device.type):
        y = model(x)
    with torch.autocast("cpu"):
        return y + model(x)

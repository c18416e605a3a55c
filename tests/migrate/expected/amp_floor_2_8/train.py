# A training script of the nanoGPT kind, written for this test: device string, cuda-string test, autocast, scaler.
from contextlib import nullcontext

import torch


def _mpsready_device(index=None):
    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""
    if torch.cuda.is_available():
        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")  # mpsready: ignore[API103]
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    return torch.device("cpu")


device = str(_mpsready_device())
dtype = "float16"
device_type = torch.device(device).type
ptdtype = {"float32": torch.float32, "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
scaler = torch.amp.GradScaler(torch.device(device).type, enabled=(dtype == "float16") and torch.device(device).type != 'cpu')


def step(model, x, optimizer):
    with ctx:
        loss = model(x).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss

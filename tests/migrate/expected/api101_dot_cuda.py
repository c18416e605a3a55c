import torch
import torch.nn as nn


def _mpsready_device(index=None):
    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""
    if torch.cuda.is_available():
        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")  # mpsready: ignore[API103]
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def train(model, batch, device):
    model = model.to(device)  # moves the model
    x = batch.to(device, non_blocking=True)
    return model(x)


def evaluate(model, batch):
    x = batch.to(_mpsready_device(0))
    y = batch.to(_mpsready_device(1))
    return model.to(_mpsready_device())(x, y)


def guarded(model):
    if torch.cuda.is_available():
        model.cuda()  # behind a CUDA check: left as it is
    return model


def look_alikes(holder, x):
    fn = holder.cuda  # an attribute, not a call
    if x.is_cuda:
        return fn
    return holder.cuda_enabled()

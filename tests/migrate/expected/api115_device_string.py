import torch


def _mpsready_device(index=None):
    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""
    if torch.cuda.is_available():
        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")  # mpsready: ignore[API103]
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


device = str(_mpsready_device(0))
device_type = torch.device(device).type  # for torch.autocast
kind = torch.device(device).type
prefix = torch.device(device).type
plain = "on" if "cuda" in device else "off"  # not a device type: left alone

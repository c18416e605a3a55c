import torch


def _mpsready_device(index=None):
    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""
    if torch.cuda.is_available():
        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")  # mpsready: ignore[API103]
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


torch.set_default_device(_mpsready_device())


def build(device):
    torch.set_default_device(device)  # the device in scope
    return torch.zeros(3)


def on_second_gpu():
    torch.set_default_device(_mpsready_device(1))
    torch.set_default_tensor_type("torch.cuda.HalfTensor")  # changes the dtype too: listed for the user


def look_alikes():
    torch.set_default_device("cpu")
    torch.set_default_tensor_type("torch.FloatTensor")
    if torch.cuda.is_available():
        torch.set_default_device("cuda")  # already only on CUDA

import time

import torch


def _mpsready_device(index=None):
    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""
    if torch.cuda.is_available():
        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")  # mpsready: ignore[API103]
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def step(model, x, seed):
    torch.cuda.manual_seed_all(seed)
    out = model(x)
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # wait for the kernels
    elif torch.backends.mps.is_available():
        torch.mps.synchronize()
    print(f"memory: {(torch.cuda.memory_allocated() if torch.cuda.is_available() else torch.mps.current_allocated_memory() if torch.backends.mps.is_available() else 0) / 2**20:.1f} MiB")
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif torch.backends.mps.is_available():
        torch.mps.empty_cache()
    if torch.cuda.is_available():
        torch.cuda.set_device(0)
    return out


def manual_only():
    print(torch.cuda.get_device_name(0))


def look_alikes(timer):
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # already guarded
    torch.mps.synchronize()
    timer.synchronize()
    torch.set_default_tensor_type("torch.FloatTensor")
    return time.time()


torch.set_default_device(_mpsready_device())
torch.set_default_device(_mpsready_device())

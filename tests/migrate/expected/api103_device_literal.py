import argparse

import json
import numpy as np
import torch


def _mpsready_device(index=None):
    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""
    if torch.cuda.is_available():
        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")  # mpsready: ignore[API103]
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


parser = argparse.ArgumentParser()
parser.add_argument("--device", default=str(_mpsready_device()), help="where to train")
device = str(_mpsready_device())


def make(n):
    a = torch.zeros(n, device=device)
    b = a.to(_mpsready_device(1))
    c = _mpsready_device(1)
    d = _mpsready_device(0)
    state = torch.load("ckpt.pt", map_location=device)
    return a, b, c, d, state


def load(path, model):
    model.load_state_dict(torch.load(path, map_location=None if torch.cuda.is_available() else "cpu"))
    table = torch.load(path + ".table", map_location=None if torch.cuda.is_available() else "cpu").numpy()
    return table


def look_alikes(path, f):
    name = "cuda"
    print("cuda")
    x = torch.zeros(3).to("cpu")
    dev = torch.device("mps")
    kept = torch.load(path, map_location="cpu")
    return name, x, dev, kept, json.load(f), np.load(path)


def ranked(rank, x, args):
    device = str(_mpsready_device(int(rank)))
    y = x.to(_mpsready_device(int(args.local_rank)))
    z = torch.zeros(2, device=_mpsready_device(int(rank)))
    g = _mpsready_device(int(rank))
    many = f"cuda:{rank}{args.suffix}"  # not a device variable the scan reports: left alone
    return device, y, z, g, many


other = argparse.ArgumentParser()
other.add_argument("--device", default=str(_mpsready_device()), choices=["cuda", "cpu", "mps"])  # the choices gain "mps"

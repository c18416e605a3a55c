import torch

device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
dev = torch.device("cuda:0" if torch.cuda.is_available() and not NO_CUDA else "mps" if torch.backends.mps.is_available() and not NO_CUDA else "cpu")
other = torch.device("cuda") if torch.cuda.device_count() > 0 else torch.device("mps") if torch.backends.mps.is_available() else torch.device("cpu")


def pick():
    if torch.cuda.is_available():
        d = "cuda"
    elif torch.backends.mps.is_available():
        d = "mps"
    else:
        d = "cpu"
    return d


def look_alike(cond):
    return "fast" if cond else "slow"

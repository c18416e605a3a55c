import torch


def pick():
    # already considers MPS: no finding, left alone
    if torch.backends.mps.is_available():
        return "mps"
    return "cuda" if torch.cuda.is_available() else "cpu"

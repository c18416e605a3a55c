"""Writing Python scalars into single positions of a small MPS tensor (a beam-search bookkeeping step)."""
import torch

dev = "mps"
scores = torch.zeros(3, device=dev)
scores[1] = 1
scores[2] = 3  # Mac (torch 2.2 on macOS 14.4): wrong result here, scores becomes [0, 3, 3]
print(scores.cpu().tolist())

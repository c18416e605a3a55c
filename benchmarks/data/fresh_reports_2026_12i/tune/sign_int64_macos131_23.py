"""A cross-encoder reranker's score post-processing takes the sign of int64 labels on MPS (macOS 13.1)."""
import torch

dev = "mps"
labels = torch.tensor([3, -1, 0, 7, -4], dtype=torch.int64, device=dev)
signs = torch.sign(labels)  # Mac raises here (int64 sign on macOS 13.1)
print(signs.tolist())

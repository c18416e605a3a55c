"""Top-k filtering of logits before sampling: everything below the k-th largest value is set to -inf, on MPS."""
import torch

dev = "mps"
k = 2
logits = torch.tensor([[0.1, 2.0, 0.7, 1.5]], device=dev)
vals, _ = logits.topk(k, dim=-1)
threshold = vals[:, [k - 1]]  # picked with an index list
logits[logits < threshold] = float("-inf")  # Mac: wrong result here (the threshold is written instead of -inf), no error
print(logits.cpu().tolist())

"""torch.isin between two int64 MPS tensors (generated token ids against a stop-token list)."""
import torch

dev = "mps"
tokens = torch.tensor([5, 17, 3, 99, 17], device=dev)
stop_ids = torch.tensor([17, 99], device=dev)
hit = torch.isin(tokens, stop_ids)  # Mac raises here
print(hit.cpu())

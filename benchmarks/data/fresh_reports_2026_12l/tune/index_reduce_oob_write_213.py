"""index_reduce_ with an index past the end of a view, on MPS."""
import torch

dev = "mps"
storage = torch.ones(64, device=dev)
view = storage[:5]
idx = torch.tensor([11], device=dev)
view.index_reduce_(0, idx, torch.tensor([88.0], device=dev), "amax", include_self=True)  # Mac: no error, writes past the view
print(storage[11].item())

"""index_copy_ into an MPS view with an index past the end of the view."""
import torch

dev = "mps"
storage = torch.zeros(10, device=dev)
view = storage[:5]
view.index_copy_(0, torch.tensor([8], device=dev), torch.tensor([999.0], device=dev))  # Mac: silent write, no IndexError
print(storage.cpu())

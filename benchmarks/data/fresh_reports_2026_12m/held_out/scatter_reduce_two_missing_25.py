"""Per-segment maximum of node features with scatter_reduce on MPS."""
import torch

dev = "mps"
feats = torch.rand(10, 4, device=dev)
seg = torch.tensor([0, 0, 1, 1, 1, 2, 2, 3, 3, 3], device=dev)
index = seg[:, None].expand(-1, 4)
out = torch.zeros(4, 4, device=dev)
out = out.scatter_reduce(0, index, feats, reduce="amax", include_self=False)  # Mac raises here
print(out)

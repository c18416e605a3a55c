"""layer_norm applied to a row slice (offset view) of a larger MPS tensor."""
import torch

dev = "mps"
torch.manual_seed(1)
rows = torch.randn(3, 4)
w, b = torch.ones(4), torch.zeros(4)
expected = torch.layer_norm(rows[1:3], (4,), w, b, 1e-5)
r = rows.to(dev)
got = torch.layer_norm(r[1:3], (4,), w.to(dev), b.to(dev), 1e-5).cpu()  # Mac: wrong result here (rows 0:2 used), no error
print("max abs gap:", (expected - got).abs().max().item())

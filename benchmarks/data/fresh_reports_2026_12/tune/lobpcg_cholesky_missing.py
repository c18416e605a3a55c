"""The dominant eigenpair of a small symmetric positive-definite matrix via torch.lobpcg on MPS."""
import torch

dev = "mps"
spd = torch.diag(torch.tensor([0.01, 0.02, 0.03, 0.04, 0.05, 0.06])).to(dev)
vals, vecs = torch.lobpcg(spd)  # Mac raises here
print(vals)

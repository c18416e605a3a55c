"""A broadcast difference reduced to one number, compiled with torch.compile on MPS, against eager CPU."""
import torch

dev = "mps"


@torch.compile
def pairwise_gap_total(a, b):
    return (a.unsqueeze(1) - b.unsqueeze(0)).sum()


torch.manual_seed(0)
a, b = torch.randn(48), torch.randn(80)
ref = (a.unsqueeze(1) - b.unsqueeze(0)).sum()
got = pairwise_gap_total(a.to(dev), b.to(dev))
print(ref.item(), got.item(), torch.allclose(ref, got.cpu(), rtol=1e-4, atol=1e-3))

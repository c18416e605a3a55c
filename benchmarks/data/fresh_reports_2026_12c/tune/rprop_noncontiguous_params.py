"""One Rprop step on a parameter that is a transposed (non-contiguous) view, on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
weight = torch.randn(3, 2).to(dev).t().detach().requires_grad_(True)  # non-contiguous leaf
target = torch.zeros(2, 3, device=dev)
opt = torch.optim.Rprop([weight], lr=0.1)
before = weight.detach().clone()
loss = ((weight - target) ** 2).sum()
loss.backward()
opt.step()  # Mac: wrong result here (non-contiguous parameter not updated), no error
print("changed:", not torch.equal(before, weight.detach()))

"""Training only the affine parameters of a layer norm on a frozen input (input.requires_grad False), on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
x = torch.randn(2, 4, device=dev)  # frozen features, no grad
w = torch.ones(4, device=dev, requires_grad=True)
b = torch.zeros(4, device=dev, requires_grad=True)
F.layer_norm(x, (4,), w, b, 1e-5).sum().backward()  # Mac: wrong result here (w.grad, b.grad), no error
print(w.grad.tolist(), b.grad.tolist())

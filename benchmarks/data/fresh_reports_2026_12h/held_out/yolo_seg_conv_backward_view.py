"""Training step of a small segmentation head whose conv output is read channels-last, on MPS."""
import torch
import torch.nn as nn

dev = "mps"
stem = nn.Conv2d(3, 16, kernel_size=3, padding=1).to(dev)
head = nn.Conv2d(16, 32, kernel_size=1).to(dev)
img = torch.randn(2, 3, 20, 20, device=dev)
coeffs = head(stem(img)).permute(0, 2, 3, 1)  # (b, h, w, c) mask coefficients
loss = (coeffs * torch.randn(2, 20, 20, 32, device=dev)).sum()
loss.backward()  # Mac raises here
print(head.weight.grad.shape)

"""NLL loss over a segmentation batch whose crop has zero height, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
logp = torch.rand(2, 4, 0, 5, device=dev)
target = torch.randint(0, 4, (2, 0, 5), device=dev)
loss = F.nll_loss(logp, target)  # Mac raises here
print(loss)

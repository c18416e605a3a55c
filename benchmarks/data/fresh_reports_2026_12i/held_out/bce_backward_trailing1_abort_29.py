"""Per-timestep binary cross-entropy on (B, T, 1) sequence outputs (as Keras hands them over), trained on MPS."""
import torch
import torch.nn as nn

dev = "mps"
logits = torch.randn(32, 50, 1, device=dev, requires_grad=True)
target = torch.randint(0, 2, (32, 50, 1), device=dev).float()
loss = nn.BCELoss(reduction="none")(torch.sigmoid(logits), target)  # (B, T, 1)
loss.mean().backward()  # Mac aborts here
print(loss.shape, logits.grad.abs().sum().item())

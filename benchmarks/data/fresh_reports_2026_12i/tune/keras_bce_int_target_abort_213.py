"""Binary cross-entropy with integer 0/1 labels, as a Keras (torch backend) model hands them to MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
probs = torch.rand(8, 1, device=dev).clamp(1e-4, 1 - 1e-4)
labels = torch.randint(0, 2, (8, 1), device=dev)  # int64 labels, never cast to float
loss = F.binary_cross_entropy(probs, labels)  # Mac aborts here
print(loss.item())

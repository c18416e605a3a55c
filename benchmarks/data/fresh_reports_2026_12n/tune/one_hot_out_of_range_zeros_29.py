"""F.one_hot on MPS with a class id equal to num_classes; the CPU refuses it."""
import torch
import torch.nn.functional as F

dev = "mps"
classes = torch.tensor([2, 8], device=dev)
encoded = F.one_hot(classes, num_classes=8)  # Mac goes silently wrong here: the bad row comes back all zeros, no error
print(encoded.cpu())

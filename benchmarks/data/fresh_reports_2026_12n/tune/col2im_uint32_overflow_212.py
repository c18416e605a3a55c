"""F.fold (col2im) on MPS with more than 2**32 column elements: a 1 x 65537 kernel over a 1 x 131073 output."""
import torch
import torch.nn.functional as F

dev = "mps"
kw = 65537
cols = torch.randn(1, kw, kw, device=dev)
img = F.fold(cols, output_size=(1, 2 * kw - 1), kernel_size=(1, kw))  # Mac, silently wrong: outputs past 2**32 corrupted, no error
print(img[0, 0, 0, -4:].cpu())

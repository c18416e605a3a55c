"""F.linear on a transposed view of a long (1, L, 256) sequence, L just above 32768, on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
seq = torch.zeros((1, 32769, 256), device=dev)
w = torch.zeros((256, 256), device=dev)
b = torch.zeros((256,), device=dev)
x = seq.transpose(1, 0)  # (L, 1, 256) view, strides (256, L * 256, 1)
out = F.linear(x, w, b)  # Mac aborts here (MPSNDArray failed assertion)
print(out.shape)

"""lgamma of a broadcast (stride-0, expanded) MPS tensor of ones: CPU gives 0, the Mac gives inf."""
import torch

dev = "mps"
wide = torch.ones(3, 10, device=dev)
narrow = torch.ones(3, 1, device=dev)
_, narrow_b = torch.broadcast_tensors(wide, narrow)
out = torch.lgamma(narrow_b)  # Mac goes silently wrong here
print(out.cpu(), torch.isinf(out).any().item())

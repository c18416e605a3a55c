"""F.max_unpool3d on MPS with float indices and an odd unbatched 3-D input; the CPU rejects the index dtype."""
import torch
import torch.nn.functional as F

dev = "mps"
vals = torch.rand((2, 5, 3), device=dev)
idx = torch.rand((2, 5, 3), device=dev)
out = F.max_unpool3d(vals, idx, kernel_size=(1, 2, 2), stride=(1, 2, 2), padding=(1, 1, 1))  # Mac: empty, no error
print(out.shape)

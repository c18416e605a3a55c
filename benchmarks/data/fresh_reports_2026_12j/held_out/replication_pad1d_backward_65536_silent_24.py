"""Train through a ReplicationPad1d on a batch of more than 65536 short sequences on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
x = torch.randn(65736, 2, 4, device=dev, requires_grad=True)
pad = nn.ReplicationPad1d((3, 4))
out = pad(x)
grad_out = torch.randn_like(out)
out.backward(grad_out)  # Mac: x.grad wrong here (batch dim >= 2**16), no error
print("grad sum:", x.grad.sum().item())

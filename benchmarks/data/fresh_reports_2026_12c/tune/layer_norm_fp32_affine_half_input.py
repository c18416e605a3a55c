"""layer_norm of a float16 activation with float32 weight and bias (mixed-precision model), on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
x = torch.randn(4, 8, dtype=torch.float16)
w = torch.randn(8)
b = torch.randn(8)
ref = F.layer_norm(x.float(), (8,), w, b)
out = F.layer_norm(x.to(dev), (8,), w.to(dev), b.to(dev))  # Mac: wrong result here (fp32 affine read as fp16), no error
print("max abs gap:", (out.cpu().float() - ref).abs().max().item())

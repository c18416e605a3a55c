"""nn.functional.linear on MPS on an Intel Mac Pro with an AMD RDNA2 GPU, compared with torch.mm."""
import torch
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)
x = torch.randn(1, 320)
w = torch.randn(1280, 320)
ref = F.linear(x, w)
out = F.linear(x.to(dev), w.to(dev)).cpu()  # Mac goes silently wrong here (RDNA2 GPUs)
via_mm = torch.mm(x.to(dev), w.t().contiguous().to(dev)).cpu()
print("linear max diff:", (out - ref).abs().max().item(), "mm max diff:", (via_mm - ref).abs().max().item())

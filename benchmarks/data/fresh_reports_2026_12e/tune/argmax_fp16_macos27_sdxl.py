"""Row-wise argmax over float16 scores on MPS, as an image sampler's token/index selection does."""
import torch

dev = "mps"
torch.manual_seed(0)
scores = torch.randn(64, 1000).half()
ref = scores.float().argmax(dim=-1)
got = scores.to(dev).argmax(dim=-1).cpu()  # Mac (macOS 27 beta): wrong result here, no error
print("mismatches:", (ref != got).sum().item())

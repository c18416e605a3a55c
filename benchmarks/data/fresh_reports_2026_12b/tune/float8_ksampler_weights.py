"""Loading a float8 (e4m3fn) checkpoint tensor onto MPS for sampling."""
import torch

dev = "mps"
weight_fp8 = torch.randn(64, 64).to(torch.float8_e4m3fn)
w = weight_fp8.to(dev)  # Mac raises here
x = torch.randn(2, 64, device=dev)
print((x @ w.to(torch.float16).float().t()).shape)

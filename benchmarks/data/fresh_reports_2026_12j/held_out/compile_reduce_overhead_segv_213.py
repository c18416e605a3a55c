"""A deep fixed-weight fp16 ReLU network compiled with mode="reduce-overhead" for inference on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
layers = []
for _ in range(48):
    layers += [nn.Linear(128, 128), nn.ReLU()]
net = nn.Sequential(*layers).to(dev).half().eval()
compiled = torch.compile(net, mode="reduce-overhead")
x = torch.randn(64, 128, device=dev, dtype=torch.float16)
with torch.no_grad():
    y = compiled(x)  # Mac crashes here (SIGSEGV in MPSStream::copy, cudagraphs option)
print(y.float().abs().mean().item())

"""Moving a float8 (e4m3fn) weight from a checkpoint's state dict onto MPS before upcasting it."""
import torch

dev = "mps"
state = {"proj.weight": torch.randn(64, 64).to(torch.float8_e4m3fn)}
layer = torch.nn.Linear(64, 64, bias=False).to(dev)
weight = state["proj.weight"].to(dev)  # Mac raises here
with torch.no_grad():
    layer.weight.copy_(weight.to(torch.float32))
print(layer(torch.randn(2, 64, device=dev)).shape)

"""An RMSNorm over 1024 features, eager and then compiled with torch.compile, on MPS."""
import torch

dev = "mps"
with torch.no_grad():
    x = torch.randn(1024, device=dev)
    norm = torch.nn.RMSNorm(1024, device=dev)
    eager = norm(x)
    compiled = torch.compile(norm)(x)  # Mac: wrong result here (all zeros), no error
    print("max abs gap:", (eager - compiled).abs().max().item())

"""An RMSNorm over a 2048-wide hidden state compiled with torch.compile on MPS."""
import torch

dev = "mps"
norm = torch.compile(torch.nn.RMSNorm(2048).to(dev))
hidden = torch.randn(3, 2048, device=dev)
print(norm(hidden).pow(2).mean().item())  # Mac raises here

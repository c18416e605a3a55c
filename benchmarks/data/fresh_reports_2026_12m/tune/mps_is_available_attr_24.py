"""Device selection that asks torch.mps (not torch.backends.mps) whether the Apple GPU is available."""
import torch

if torch.cuda.is_available():
    device = "cuda"
elif torch.mps.is_available():  # Mac raises here
    device = "mps"
else:
    device = "cpu"
print(torch.zeros(2, device=device))

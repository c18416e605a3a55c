"""An attention-score product in a VAE encoder whose (M, N) output exceeds 2**32 elements, on MPS."""
import torch

dev = "mps"
q = torch.randn(1, 65600, 1, dtype=torch.float16, device=dev)
k = torch.randn(1, 1, 65600, dtype=torch.float16, device=dev)
scores = torch.bmm(q, k)  # Mac raises here
print(scores.shape)

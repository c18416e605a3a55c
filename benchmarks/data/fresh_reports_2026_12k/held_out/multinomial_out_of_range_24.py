"""Drawing many class indices with replacement from a sharply peaked 10-way distribution on MPS."""
import torch

dev = "mps"
torch.manual_seed(0)
weights = torch.tensor([2.1e-4, 3.3e-7, 4.4e-7, 1.2e-5, 6.1e-5, 4.2e-3, 0.9954, 6.5e-8, 2.3e-4, 5.2e-7], device=dev)
draws = torch.multinomial(weights, 20_000_000, replacement=True)  # Mac goes silently wrong here
print("largest index drawn:", int(draws.max()), "of", weights.numel() - 1)

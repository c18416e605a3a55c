"""Sampling an outputscale from a Gamma(2, 0.15) prior on MPS, as a fully Bayesian GP does."""
import torch

dev = "mps"
prior = torch.distributions.Gamma(torch.tensor(2.0, device=dev), torch.tensor(0.15, device=dev))
outputscale = prior.rsample((16,))  # Mac raises here
print(outputscale.mean().item())

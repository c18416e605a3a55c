"""Flagging special tokens among generated ids on MPS, as a speech-recognition generate loop does."""
import torch

dev = "mps"
generated = torch.tensor([[50258, 50259, 440, 2068, 50257]], device=dev)
special = torch.tensor([50257, 50258, 50259], device=dev)
is_special = torch.isin(generated, special)  # Mac (torch 2.3) raises here
print(is_special.sum().item())

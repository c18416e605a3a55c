"""Selecting the text tokens of a prompt with a boolean mask built on MPS while the ids stay on the CPU."""
import torch

dev = "mps"
input_ids = torch.tensor([[101, 7, 8, 9, 102, 0]])  # tokenizer output, left on the CPU
text_mask = torch.tensor([[1, 1, 1, 1, 1, 0]], device=dev).bool()
masked_ids = input_ids[~text_mask].to(dev)  # Mac raises here
print(masked_ids.tolist())

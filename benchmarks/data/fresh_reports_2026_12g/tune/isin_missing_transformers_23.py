"""Stopping check during text generation: is the last generated id one of the EOS ids? (torch.isin), on MPS."""
import torch

dev = "mps"
generated = torch.tensor([[5, 17, 2], [9, 4, 11]], device=dev)
eos_ids = torch.tensor([2, 50256], device=dev)
done = torch.isin(generated[:, -1], eos_ids)  # Mac raises here
print(done.tolist())

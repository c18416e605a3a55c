"""Low-rank factors of a weight difference with torch.linalg.svd on MPS (LoRA extraction)."""
import torch

dev = "mps"
delta = torch.randn(256, 128, device=dev)
U, S, Vh = torch.linalg.svd(delta, full_matrices=False)  # Mac warns here (CPU fallback), then completes
rank = 16
lora_up = U[:, :rank] * S[:rank]
print(lora_up.shape, Vh[:rank].shape)

"""Unpacking 4-bit quantized weights with a per-element right shift (GGUF-style dequantization) on MPS."""
import torch

dev = "mps"
packed = torch.randint(0, 256, (64, 16), dtype=torch.uint8, device=dev)
shifts = torch.tensor([0, 4], dtype=torch.uint8, device=dev).view(1, 1, 2)
nibbles = (packed.unsqueeze(-1) >> shifts) & 0x0F  # Mac raises here
print(nibbles.shape, nibbles.float().mean().item())

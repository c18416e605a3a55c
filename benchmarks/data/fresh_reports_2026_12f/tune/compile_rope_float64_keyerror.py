"""A compiled rotary-embedding helper: frequencies in float64 on the CPU, cast to float32 on the model's device."""
import torch

dev = "mps"


def rope_cos(pos, dim=16, theta=10000.0):
    scale = torch.linspace(0, (dim - 2) / dim, dim // 2, dtype=torch.float64)
    omega = 1.0 / theta**scale
    angles = pos.cpu().double()[:, None] * omega[None, :]
    return torch.cos(angles).to(dtype=torch.float32, device=pos.device)


pos = torch.arange(8, dtype=torch.float32, device=dev)
out = torch.compile(rope_cos)(pos)  # Mac raises here
print(out.shape, out.dtype)

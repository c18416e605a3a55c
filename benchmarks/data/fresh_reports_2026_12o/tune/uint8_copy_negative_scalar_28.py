"""copy_ of a 0-d float -1.0 into a small uint8 MPS buffer: CPU wraps to 255, the Mac writes 0."""
import torch

dev = "mps"
buf = torch.zeros(2, 2, dtype=torch.uint8, device=dev)
buf.copy_(torch.tensor(-1.0))  # Mac goes silently wrong here
print(buf.cpu().tolist())

"""GPT-2 token ids (0..50256) packed as uint16 on MPS to halve their memory."""
import torch

dev = "mps"
ids = torch.randint(0, 50257, (4, 128), dtype=torch.int32, device=dev)
packed = ids.to(torch.uint16)  # Mac raises here
print(torch.equal(packed.cpu().to(torch.int32), ids.cpu()))

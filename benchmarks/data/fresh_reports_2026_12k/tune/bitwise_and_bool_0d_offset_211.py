"""Masking a boolean row with a flag taken out of another boolean tensor (a 0-d view at storage offset 1) on MPS."""
import torch

dev = "mps"
flags = torch.tensor([True, False], device=dev)
keep = flags[1]  # 0-d view: value False, storage_offset 1
row = torch.tensor([True, True, False, True], device=dev)
masked = torch.bitwise_and(row, keep)  # Mac goes silently wrong here
print(masked.tolist())

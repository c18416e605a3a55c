"""Sending a generated image tensor that lives on MPS through a multiprocessing pipe, as a worker returns its result."""
import torch
import torch.multiprocessing as mp

dev = "mps"
image = torch.rand(3, 16, 16, device=dev)
to_parent, from_worker = mp.Pipe()
to_parent.send({"image": image})  # Mac raises here
print(from_worker.recv()["image"].shape)

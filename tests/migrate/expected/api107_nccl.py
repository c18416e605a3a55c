import torch
import torch.distributed as dist

BACKEND = "nccl"


def setup(rank, world, backend_name):
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo", rank=rank, world_size=world)
    torch.distributed.init_process_group(backend='nccl' if torch.cuda.is_available() else 'gloo', init_method="env://")
    dist.init_process_group(BACKEND)  # through a variable: listed as manual
    dist.init_process_group(backend_name)  # no literal: no finding


def look_alike():
    dist.init_process_group("gloo")

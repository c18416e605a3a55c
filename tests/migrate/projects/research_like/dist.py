import torch
import torch.distributed as dist


def setup(backend):
    print(torch.cuda.get_device_name(0))
    dist.init_process_group(backend)

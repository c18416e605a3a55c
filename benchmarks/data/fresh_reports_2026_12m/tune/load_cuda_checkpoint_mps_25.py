"""Load a checkpoint that was saved from a CUDA machine, on an Apple silicon Mac, without map_location."""
import io

import torch


# Stand-in for a downloaded .pth saved on a CUDA box: tag every storage as living on cuda:0.
def _tag_as_cuda(obj):
    return "cuda:0" if getattr(obj, "device", None) is not None and obj.device.type == "cpu" else None


torch.serialization.register_package(1, _tag_as_cuda, lambda obj, location: None)
blob = io.BytesIO()
torch.save({"image_encoder.weight": torch.ones(4, 4)}, blob)
blob.seek(0)

dev = "mps"
state = torch.load(blob)  # Mac raises here
weights = {k: v.to(dev) for k, v in state.items()}
print(list(weights))

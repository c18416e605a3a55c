"""An image-to-video pipeline whose image encoder hard-codes .cuda() while the rest of the pipeline uses MPS."""
import torch

dev = "mps"
encoder = torch.nn.Linear(48, 16).to(dev)
ref_image = torch.rand(1, 48, device=dev)


def encode_image(image):
    return encoder(image.cuda())  # Mac raises here


print(encode_image(ref_image).shape)

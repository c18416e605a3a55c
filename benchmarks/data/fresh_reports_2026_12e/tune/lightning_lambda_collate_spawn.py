"""An audio DataLoader with worker processes whose dataset transform is a lambda, iterated before training on MPS."""
import torch
from torch.utils.data import DataLoader, Dataset

dev = "mps"


class Clips(Dataset):
    def __init__(self, transform):
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.transform(torch.randn(2, 16000))


if __name__ == "__main__":
    ds = Clips(transform=lambda audio: audio)
    loader = DataLoader(ds, batch_size=2, num_workers=2)
    for batch in loader:  # Mac raises here
        print(batch.to(dev).shape)
        break

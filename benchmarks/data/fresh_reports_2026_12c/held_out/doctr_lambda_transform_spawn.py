"""A training script whose 'no augmentation' transform is a lambda defined in main(), with DataLoader workers."""
import torch
from torch.utils.data import DataLoader, Dataset

dev = "mps"


class Pages(Dataset):
    def __init__(self, transform):
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.transform(torch.full((3, 32, 32), float(i)))


def main():
    identity = lambda x: x  # noqa: E731
    loader = DataLoader(Pages(identity), batch_size=4, num_workers=2)
    for batch in loader:  # Mac raises here
        print(batch.to(dev).mean().item())


if __name__ == "__main__":
    main()

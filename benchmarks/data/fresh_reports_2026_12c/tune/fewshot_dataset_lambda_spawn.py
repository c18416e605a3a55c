"""A dataset given a get_labels lambda, loaded with two DataLoader workers, then moved to MPS."""
import torch
from torch.utils.data import DataLoader, TensorDataset

dev = "mps"

if __name__ == "__main__":
    images = torch.randn(20, 1, 28, 28)
    classes = torch.arange(20) % 5
    test_set = TensorDataset(images, classes)
    test_set.get_labels = lambda: classes.tolist()
    loader = DataLoader(test_set, batch_size=5, num_workers=2)
    batch, labels = next(iter(loader))  # Mac raises here
    print(batch.to(dev).shape, labels.tolist())

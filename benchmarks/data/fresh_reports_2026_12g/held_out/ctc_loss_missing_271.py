"""CTC loss of a small sequence recognizer (speech / handwriting) computed on MPS."""
import torch
import torch.nn.functional as F

dev = "mps"
T, N, C, S = 30, 2, 20, 10
log_probs = torch.randn(T, N, C, device=dev).log_softmax(2)
targets = torch.randint(1, C, (N, S), device=dev)
input_lengths = torch.full((N,), T, dtype=torch.long, device=dev)
target_lengths = torch.full((N,), S, dtype=torch.long, device=dev)
loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths)  # Mac raises here
print(loss.item())

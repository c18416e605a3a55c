"""``--max-steps`` in a training loop that updates its parameters by hand: no ``Optimizer.step`` ever runs, so the
optimizer-step hook never fired and ``--max-steps 3`` stopped nothing (the loop ran to its end or to the time limit,
as pytorch/examples' regression does). A program that builds no optimizer ends a step at each backward pass."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from tests.run.helpers import emulate, write  # noqa: E402

BY_HAND = '''\
import torch
w = torch.zeros(2, device="mps", requires_grad=True)
done = 0
for step in range(1000):
    (w - 1).pow(2).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    done += 1
    print(done)
print("never printed")
'''


def test_a_loop_without_an_optimizer_stops_after_n_backward_passes(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, BY_HAND), max_steps=3)
    assert (doc["outcome"], doc["steps"], doc["exit_code"], out) == ("stopped", 0, 0, "1\n2\n3\n")
    assert doc["stop_reason"] == ("--max-steps 3 reached (backward passes: the program builds no torch.optim "
                                  "optimizer)")


ACCUMULATE = '''\
import torch
w = torch.zeros(2, device="mps", requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
backwards = 0
for step in range(1000):
    for micro in range(4):
        (w - 1).pow(2).sum().backward()
        backwards += 1
    opt.step()
    opt.zero_grad()
    print(backwards)
print("never printed")
'''


def test_look_alike_gradient_accumulation_with_an_optimizer_counts_optimizer_steps(tmp_path):
    # four backward passes per update: with an optimizer built, only its steps count, so the first update runs
    _r, doc, out, _e = emulate(write(tmp_path, ACCUMULATE), max_steps=2)
    assert (doc["outcome"], doc["steps"], out) == ("stopped", 2, "4\n")
    assert doc["stop_reason"] == "--max-steps 2 reached (optimizer steps)"


def test_without_max_steps_a_loop_by_hand_runs_to_its_end(tmp_path):
    short = BY_HAND.replace("range(1000)", "range(4)").replace("    print(done)\n", "")
    _r, doc, out, _e = emulate(write(tmp_path, short))
    assert (doc["outcome"], doc["steps"], doc["stop_reason"], out) == ("completed", 0, None, "never printed\n")

"""Overhead of ``mpsready trace``'s recorder: traced / untraced step time.

Runs a small CNN training step and a small transformer training step through the shared step
runner, first plainly, then with the recorder attached (composites expanded per the torch 2.13
support table, as ``mpsready trace`` does), and prints the ratio of the median step times
(data + forward + loss + backward + optimizer step, after warm-up steps), measured as CPU time of
the one torch thread so that other processes on a shared machine do not distort the ratio; runs are
interleaved, and the best steps are compared as well as the medians.

    PYTHONPATH=src python benchmarks/trace_bench.py [--steps 10] [--rounds 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from mpsready.ops.api import load_db
from mpsready.step import Entry, Step
from mpsready.step.runner import Observer, run_entry
from mpsready.trace.recorder import Recorder


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.body(x), 1))


def cnn_step():
    torch.manual_seed(0)
    m = CNN()
    return Step(model=m, batch=(torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))), loss_fn=F.cross_entropy,
                optimizer=lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9))


class TinyLM(nn.Module):
    def __init__(self, vocab=1000, d=128, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(d, vocab)

    def forward(self, ids):
        return self.out(self.enc(self.emb(ids)))


def lm_loss(logits, target):
    return F.cross_entropy(logits.flatten(0, 1), target.flatten())


def transformer_step():
    torch.manual_seed(0)
    m = TinyLM()
    ids = torch.randint(0, 1000, (16, 64))
    return Step(model=m, batch=(ids, ids.roll(-1, 1)), loss_fn=lm_loss,
                optimizer=lambda p: torch.optim.AdamW(p, lr=1e-3))


STEP_STAGES = ("data", "forward", "loss", "backward", "optimizer_step")


class CpuClock(Observer):
    """CPU seconds of this thread per step (torch runs with one thread here): unlike wall time, other
    processes on a shared machine barely change it."""

    def __init__(self):
        self.t0 = 0.0
        self.seconds: list[float] = []

    def stage_started(self, ctx, stage):
        if stage == "data":
            self.t0 = time.thread_time()

    def step_finished(self, ctx, index, loss, seconds):
        self.seconds.append(time.thread_time() - self.t0)


def step_times(fn, steps: int, traced: bool) -> list[float]:
    """CPU seconds of each step after 3 warm-up steps (lazy initialisation)."""
    entry = Entry(spec=f"bench:{fn.__name__}", function=fn, root=Path(__file__).parent, source_file=None)
    observers = []
    if traced:
        db = load_db("2.13")
        cache: dict[str, bool] = {}

        def expand(name: str) -> bool:
            if name not in cache:
                cache[name] = db.lookup(name).status == "composite"
            return cache[name]

        observers = [Recorder(str(entry.root), device="cpu", expand=expand)]
    clock = CpuClock()
    run_entry(entry, device="cpu", steps=steps + 3, observers=[clock] + observers)
    return clock.seconds[3:]


def ops_per_step(fn) -> tuple[int, int]:
    """(top-level op calls, composite callee calls) of one traced step."""
    entry = Entry(spec="bench", function=fn, root=Path(__file__).parent, source_file=None)
    db = load_db("2.13")
    rec = Recorder(str(entry.root), device="cpu", expand=lambda n: db.lookup(n).status == "composite")
    run_entry(entry, device="cpu", steps=1, observers=[rec])
    calls = [c for c in rec.calls() if c.stage in STEP_STAGES]
    return sum(c.count for c in calls if c.parent is None), sum(c.count for c in calls if c.parent)


def per_op_overhead() -> tuple[float, float]:
    """Recorder cost per op, microseconds (best of 7 runs of 2000 calls): a plain op (add) and a
    composite that is expanded (mean -> mean.dim)."""
    from mpsready.trace.recorder import _Mode

    db = load_db("2.13")
    rec = Recorder(str(Path(__file__).parent), device="cpu", expand=lambda n: db.lookup(n).status == "composite")
    rec.stage = "forward"
    x = torch.ones(4)

    def best(op) -> float:
        out = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(2000):
                op(x)
            out.append((time.perf_counter() - t0) / 2000 * 1e6)
        return min(out)

    results = []
    for op in (lambda t: t + 1, lambda t: t.mean()):
        plain = best(op)
        with _Mode(rec):
            op(x)
            traced = best(op)
        results.append(traced - plain)
    return results[0], results[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10, help="timed steps per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1: a shared machine)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds x {args.steps} steps "
          "after 3 warm-up steps each")
    worst = 0.0
    for name, fn in (("small CNN (32x3x32x32, 3 conv+BN)", cnn_step),
                     ("small transformer (2 layers, d=128, 16x64 tokens)", transformer_step)):
        plain: list[float] = []
        traced: list[float] = []
        for _ in range(args.rounds):  # interleaved, so load from other processes hits both alike
            plain += step_times(fn, args.steps, traced=False)
            traced += step_times(fn, args.steps, traced=True)
        top, inner = ops_per_step(fn)
        r_min = min(traced) / min(plain)
        r_med = statistics.median(traced) / statistics.median(plain)
        worst = max(worst, r_min)
        print(f"{name}: {top} ops + {inner} composite callees per step; CPU time untraced {min(plain) * 1e3:.2f} ms "
              f"(median {statistics.median(plain) * 1e3:.2f}), traced {min(traced) * 1e3:.2f} ms "
              f"(median {statistics.median(traced) * 1e3:.2f}); ratio {r_min:.2f}x (best steps), "
              f"{r_med:.2f}x (medians)")
    print(f"worst ratio (best steps) {worst:.2f}x (target <= 1.30x)")
    plain_us, comp_us = per_op_overhead()
    print(f"recorder cost per op: {plain_us:.1f} us (plain op), {comp_us:.1f} us (expanded composite incl. its "
          "callee); wall-clock ratios on a shared machine vary by +-20% between runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

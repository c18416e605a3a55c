"""Recording overhead of `mpsready record` (prints ratios; not a test).

    PYTHONPATH=src python benchmarks/record_bench.py [--steps 5]

Compares, for the example CNN entry and a wider one, the median time of a plain in-process
training step with the step times that `record` stores (`seconds`: recording time subtracted;
`seconds_with_recording`: as measured) and with the wall time of the whole `record` call
(subprocess start, PyTorch import, env record). Both run with --threads intra-op threads
(default 1: on a shared machine, OpenMP thread contention otherwise dominates the figures).

Each entry is recorded twice, with the NaN check (the default: one reduction per floating result of every
op, mpsready.numerics) and with ``--no-nan-check``; the last column is the check's cost as a share of the
recorded step (``seconds``). Goal: <= 10 %.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

ROOT = Path(__file__).resolve().parent.parent
BENCH_ENTRY = Path(__file__).resolve()


def wide(device="cpu"):
    from mpsready.step import Step

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(32 * 16, 10))
    g = torch.Generator().manual_seed(1)
    return Step(model=model, batch=(torch.randn(32, 3, 32, 32, generator=g), torch.randint(0, 10, (32,), generator=g)),
                loss_fn=F.cross_entropy, optimizer=torch.optim.SGD(model.parameters(), lr=0.01))


def plain(step_fn, steps: int) -> float:
    s = step_fn()
    times = []
    x, y = s.batch
    for _ in range(steps):
        t0 = time.perf_counter()
        s.optimizer.zero_grad(set_to_none=True)
        loss = s.loss_fn(s.model(x), y)
        loss.backward()
        s.optimizer.step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:] or times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1,
                    help="intra-op threads for both runs (1: stable figures on a shared machine)")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # the record worker inherits it
    torch.set_num_threads(args.threads)
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT / "docs" / "examples"))
    from mpsready.record import record_entry
    import tiny_cnn_entry

    cases = [("tiny CNN (docs example)", f"{ROOT / 'docs/examples/tiny_cnn_entry.py'}:step", tiny_cnn_entry.step),
             ("wide CNN 32x3x32x32", f"{BENCH_ENTRY}:wide", wide)]
    print(f"{'entry':26} {'plain s':>9} {'recorded s':>11} {'ratio':>6} {'with rec s':>11} {'ratio':>6} "
          f"{'record call s':>14} {'no-nan s':>9} {'nan check':>9}")
    for name, spec, fn in cases:
        base = plain(fn, args.steps)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            rec = record_entry(spec, device="cpu", steps=args.steps, out=Path(tmp) / "r")
            wall = time.perf_counter() - t0
            off = record_entry(spec, device="cpu", steps=args.steps, out=Path(tmp) / "off", nan_check=False)
        sm = rec.step_metrics[1:] or rec.step_metrics
        r = statistics.median(m["seconds"] for m in sm)
        w = statistics.median(m["seconds_with_recording"] for m in sm)
        o = statistics.median(m["seconds"] for m in (off.step_metrics[1:] or off.step_metrics))
        print(f"{name:26} {base:9.4f} {r:11.4f} {r / base:6.2f} {w:11.4f} {w / base:6.2f} {wall:14.2f} "
              f"{o:9.4f} {(r / o - 1) * 100:+8.1f}%")


if __name__ == "__main__":
    main()

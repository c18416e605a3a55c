"""Cost of the emulated MPS device (``mpsready run``): emulated step time / plain CPU step time.

The trace benchmark's models (a small CNN and a small transformer, ``trace_bench.py``) train for a few
steps through the shared step runner, once plainly on the CPU and once on the emulated MPS device (the
program's tensors on ``mps``, every aten call judged for torch 2.13 / macOS 15.5), interleaved over rounds.
Step time is CPU time of the one torch thread (data + forward + loss + backward + optimizer step, after
warm-up), so other processes on a shared machine barely change it. Goal: ratio <= 1.5.

A third run adds ``mpsready run``'s numerics watch (:class:`mpsready.numerics.hooks.RunWatch`: the NaN check,
one reduction per floating result, and the shape count per call); its cost is printed as a share of the
emulated step. Goal: <= 10 %.

    PYTHONPATH=src python benchmarks/run_bench.py [--steps 10] [--rounds 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from trace_bench import CpuClock, cnn_step, transformer_step  # noqa: E402

from mpsready.emulate import Emulator, Target  # noqa: E402
from mpsready.step import Entry  # noqa: E402
from mpsready.step.runner import run_entry  # noqa: E402


def step_times(fn, steps: int, emulated: bool, watch: bool = False) -> list[float]:
    entry = Entry(spec=f"bench:{fn.__name__}", function=fn, root=Path(__file__).parent, source_file=None)
    clock = CpuClock()
    if not emulated:
        run_entry(entry, device="cpu", steps=steps + 3, observers=[clock])
        return clock.seconds[3:]
    emu = Emulator(Target("2.13", "15.5"), str(Path(__file__).parent))
    emu.install()
    numerics = None
    if watch:
        from mpsready.numerics.hooks import RunWatch

        numerics = RunWatch(emu)
        numerics.install()
    try:
        run_entry(entry, device="mps", steps=steps + 3, observers=[clock])
    finally:
        if numerics is not None:
            numerics.uninstall()
        emu.uninstall()
    if emu.failures:
        raise SystemExit(f"{fn.__name__}: predicted failure {emu.failures[0].to_dict()['message']}")
    return clock.seconds[3:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    for fn in (cnn_step, transformer_step):
        plain, emu, watched = [], [], []
        for _ in range(args.rounds):
            plain += step_times(fn, args.steps, False)
            emu += step_times(fn, args.steps, True)
            watched += step_times(fn, args.steps, True, watch=True)
        mp, me, mw = statistics.median(plain), statistics.median(emu), statistics.median(watched)
        bp, be, bw = min(plain), min(emu), min(watched)
        print(f"{fn.__name__}: plain CPU {mp * 1e3:.1f} ms/step, emulated MPS {me * 1e3:.1f} ms/step, "
              f"ratio {me / mp:.2f} (median), {be / bp:.2f} (best); goal <= 1.5")
        print(f"{fn.__name__}: with the numerics watch {mw * 1e3:.1f} ms/step: +{(mw / me - 1) * 100:.1f} % "
              f"(median), +{(bw / be - 1) * 100:.1f} % (best) of the emulated step; goal <= 10 %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Cost of the emulated MPS device (``mpsready run`` and ``mpsready trace``): step time / plain CPU step time.

Three small models (an MLP, the trace benchmark's CNN and transformer, ``trace_bench.py``) train for a few steps
through the shared step runner, interleaved over rounds, in each of these set-ups:

* ``plain``: on the CPU, nothing attached;
* ``bare``: on the CPU under a bare observe-only ``TorchDispatchMode`` (``func(*args, **kwargs)`` and nothing
  else): the floor any dispatch-level observer pays;
* ``run``: on the emulated MPS device (the program's tensors on ``mps``, every aten call judged for torch 2.13 /
  macOS 15.5), as ``mpsready run`` has it;
* ``run+nan``: the same with ``mpsready run``'s numerics watch (:class:`mpsready.numerics.hooks.RunWatch`: the
  NaN check, one reduction per floating result, and the shape count per call);
* ``trace``: ``mpsready trace``'s emulated trace (the emulated device with the recorder attached, composites
  expanded per the torch 2.13 table; no numerics watch).

Step time is CPU time of the one torch thread (data + forward + loss + backward + optimizer step, after 3 warm-up
steps), so other processes on a shared machine barely change it; medians and best steps are printed. Per aten
call: (set-up step - plain step) / aten calls of a plain step (counted with a counting mode), in microseconds;
mpsready's extra cost per call is the ``run`` figure, compared with the ``bare`` one (goal: <= 1.3x). Goals per
step: run and trace <= 1.3x plain; the numerics watch <= +10 % of the run step. On a shared machine one set-up's
median moves by +-5 % between rounds (docs/numerics.md "Cost"): a change of a few % in the watch needs many more
rounds and steps (``--rounds 16 --steps 20``) than the default to show.

    PYTHONPATH=src python benchmarks/run_bench.py [--steps 10] [--rounds 3] [--threads 1] [--models mlp,cnn,...]

Last measured (``--rounds 3 --steps 5``, torch 2.13, 2 shared, loaded cores, two runs; plain moved by a quarter
between runs): run / plain MLP 1.34 / 1.53, CNN 1.13 / 1.23, transformer 1.25 / 1.20; trace / plain MLP 1.87 /
1.86, CNN 1.38 / 1.48, transformer 1.36 / 1.29. Why the MLP stays above 1.3: docs/emulation.md (the function
mode's cost is its existence; the placement check needs it).

Issue 39 (``--rounds 3 --steps 8``, two runs each alternating with the commit before the issue, loaded 2-core
machine; the run set-up without Dynamo's shim, as a program that never imports ``torch._dynamo`` runs): run / plain
(median) MLP 1.61, 1.68 -> 1.61, 1.58; CNN 1.47, 1.18 -> 1.20, 1.04 (its plain step moved by a third between
runs); transformer 1.29, 1.29 -> 1.25, 1.25. The run's extra cost per aten call: MLP 16.7, 16.8 -> 15.7, 15.7 us,
transformer 25.0, 25.8 -> 20.7, 21.7 us.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).parent))
from trace_bench import STEP_STAGES, CpuClock, cnn_step, transformer_step  # noqa: E402

from mpsready.emulate import Emulator, Target  # noqa: E402
from mpsready.ops.api import load_db  # noqa: E402
from mpsready.step import Entry, Step  # noqa: E402
from mpsready.step.runner import Observer, run_entry  # noqa: E402

TORCH, MACOS = "2.13", "15.5"
WARMUP = 3
SETUPS = ("plain", "bare", "run", "run+nan", "trace")


def mlp_step():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.GELU(), nn.LayerNorm(512),
                      nn.Linear(512, 10))
    return Step(model=m, batch=(torch.randn(64, 256), torch.randint(0, 10, (64,))), loss_fn=F.cross_entropy,
                optimizer=lambda p: torch.optim.Adam(p, lr=1e-3))


class Bare(TorchDispatchMode):
    """A bare observe-only dispatch mode: forwards every aten call unchanged."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _Counting(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


class _CountStages(Observer):
    """Counts the aten calls of the step stages (not ``build``) of one plain CPU step."""

    def __init__(self):
        self.mode = _Counting()
        self.calls = 0

    def stage_started(self, ctx, stage):
        if stage in STEP_STAGES:
            self.mode.calls = 0
            self.mode.__enter__()

    def stage_finished(self, ctx, stage, result):
        if stage in STEP_STAGES:
            self.mode.__exit__(None, None, None)
            self.calls += self.mode.calls


def aten_calls_per_step(fn) -> int:
    entry = Entry(spec=f"bench:{fn.__name__}", function=fn, root=Path(__file__).parent, source_file=None)
    counter = _CountStages()
    run_entry(entry, device="cpu", steps=1, observers=[counter])
    return counter.calls


def _expand_2_13():
    db = load_db(TORCH)
    cache: dict[str, bool] = {}

    def expand(name: str) -> bool:
        v = cache.get(name)
        if v is None:
            v = cache[name] = db.lookup(name).status == "composite"
        return v
    return expand, db


def step_times(fn, steps: int, setup: str) -> list[float]:
    """CPU seconds of each step of ``fn`` in ``setup`` (module docstring), after the warm-up steps."""
    entry = Entry(spec=f"bench:{fn.__name__}", function=fn, root=Path(__file__).parent, source_file=None)
    clock = CpuClock()
    n = steps + WARMUP
    if setup == "plain":
        run_entry(entry, device="cpu", steps=n, observers=[clock])
    elif setup == "bare":
        with Bare():
            run_entry(entry, device="cpu", steps=n, observers=[clock])
    elif setup == "trace":
        from mpsready.trace.api import sdpa_math_stages
        from mpsready.trace.emulated import emulated_trace

        expand, db = _expand_2_13()
        emulated_trace(entry, TORCH, MACOS, False, expand, n, sdpa_math_stages(db), None, observers=[clock])
    else:
        emu = Emulator(Target(TORCH, MACOS), str(Path(__file__).parent))
        emu.install()
        # the bare set-up imported torch._dynamo in this process, so install() put Dynamo's shim on the mode; a
        # program that never imports it runs without (emulate/dynamo_shim.py, issue 39), as measured here
        from mpsready.emulate.dispatch import _HANDLE, MPSDispatch

        MPSDispatch.__torch_dispatch__ = _HANDLE  # type: ignore[method-assign]
        numerics = None
        if setup == "run+nan":
            from mpsready.numerics.hooks import RunWatch

            numerics = RunWatch(emu)
            numerics.install()
        try:
            run_entry(entry, device="mps", steps=n, observers=[clock])
        finally:
            if numerics is not None:
                numerics.uninstall()
            emu.uninstall()
        if emu.failures:
            raise SystemExit(f"{fn.__name__}: predicted failure {emu.failures[0].to_dict()['message']}")
    return clock.seconds[WARMUP:]


MODELS = {"mlp": mlp_step, "cnn": cnn_step, "transformer": transformer_step}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds x {args.steps} steps after "
          f"{WARMUP} warm-up steps each, set-ups interleaved; CPU time of the torch thread")
    for key in args.models.split(","):
        fn = MODELS[key]
        times: dict[str, list[float]] = {s: [] for s in SETUPS}
        for _ in range(args.rounds):  # interleaved, so load from other processes hits every set-up alike
            for s in SETUPS:
                times[s] += step_times(fn, args.steps, s)
        med = {s: statistics.median(v) for s, v in times.items()}
        best = {s: min(v) for s, v in times.items()}
        calls = aten_calls_per_step(fn)
        print(f"{key}: {calls} aten calls per plain step; ms/step (median): "
              + ", ".join(f"{s} {med[s] * 1e3:.1f}" for s in SETUPS))
        for s in ("run", "trace"):
            print(f"{key}: {s} / plain {med[s] / med['plain']:.2f} (median), {best[s] / best['plain']:.2f} (best); "
                  "goal <= 1.3")
        print(f"{key}: numerics watch +{(med['run+nan'] / med['run'] - 1) * 100:.1f} % (median), "
              f"+{(best['run+nan'] / best['run'] - 1) * 100:.1f} % (best) of the run step; goal <= 10 %")
        per = {s: (med[s] - med["plain"]) / calls * 1e6 for s in ("bare", "run", "trace")}
        print(f"{key}: extra cost per aten call (median): bare mode {per['bare']:.1f} us, run {per['run']:.1f} us, "
              f"trace {per['trace']:.1f} us; run / bare {per['run'] / per['bare']:.2f} (goal <= 1.3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

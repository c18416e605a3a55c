"""Per-call cost of the emulated MPS device's hot path (``mpsready run``), against a bare dispatch mode.

Two measures, each the median of ``--rounds`` interleaved rounds (after one warm-up round) of ``--calls`` calls, CPU time of this thread:

* ``python``: the Python of one ``__torch_dispatch__`` call alone (the mode's function called directly, below
  the C++ mode machinery, with the Python key off so the kernel is the plain CPU one): the emulator's
  :class:`mpsready.emulate.dispatch.MPSDispatch` on two resident float32 4x4 tensors (a memoised plan,
  ``aten::add.Tensor``) against a bare observe-only mode (``func(*args, **kwargs)``); and the device function
  mode's (:class:`mpsready.emulate.device.DeviceMode`) forwarding of ``torch.add``;
* ``call``: ``torch.add`` of the same tensors through the whole stack: plain, under the bare dispatch mode,
  and on the emulated device (both modes installed), with and without ``mpsready run``'s numerics watch;
* ``function mode``: the Python-level mode alone (dispatch off), per kind of call on resident tensors (a
  property read, ``torch.add``, ``F.relu``): a bare observe-only ``TorchFunctionMode`` and the emulator's
  ``DeviceMode``, extra over plain. The bare mode's figure is what any device model built on a
  ``TorchFunctionMode`` pays (docs/emulation.md: why the emulator keeps one);
* ``trace``: the same call on the emulated device inside a stage of ``mpsready trace``'s recorder, the recorder
  handing each call to the emulator's mode directly (``MPSDispatch.forward``, as ``trace/emulated.py`` has it)
  and, interleaved with it, through the dispatcher to the emulator's mode stacked below (two modes per call).

Extra cost = set-up - plain (or - the bare mode's Python); the goal of issue 25 is the emulator's extra cost per
aten call <= 1.3x the bare mode's (the step-level figure is ``run_bench.py``'s). The ``call`` rounds run in
alternating order (plain, bare, run, then the reverse), and besides the ratio of the medians the script prints
the median of each round's own run / bare with its spread (min-max, quartiles), so that a change of the shared
machine's load weighs on both sides, and the device function mode's share of run's extra cost (the same call with
``torch._C.DisableTorchFunction``: the dispatch mode alone). ``--only-call`` stops after those lines.

    PYTHONPATH=src python benchmarks/dispatch_bench.py [--calls 20000] [--rounds 9] [--only-call]

Last measured (torch 2.13, 2 shared, loaded cores, two runs): the emulator's Python 1.62 / 1.72 us beyond the bare
mode's 1.67 / 1.76 us; ``torch.add`` extra 6.05 / 6.36 us on the emulated device against the bare mode's 2.81 /
2.94 us (run / bare 2.15 / 2.17); function mode, bare / emulator's: property read 0.9 / 1.05-1.08 us,
``torch.add`` 0.9 / 1.3 us, ``F.relu`` 2.1-2.2 / 2.5-2.6 us; traced ``torch.add`` 5.7-6.0 us (6.6-7.5 us before the
recorder read the residence map).

Issue 39 (``--calls 10000 --rounds 7``, two runs each, alternating with the commit before the issue, same load):
the emulator's Python beyond the bare mode's 1.71 / 1.59 us -> 1.46 / 1.45 us; ``torch.add``'s extra on the
emulated device 5.97 / 5.89 us -> 5.02 / 4.89 us against the bare mode's 3.12 / 2.94 -> 2.90 / 2.96 us: run / bare
1.92 / 2.00 -> 1.73 / 1.65 (goal 1.5 not reached); with ``torch._dynamo`` loaded (the shim back on) 1.93 / 1.87;
run+nan extra 9.74 / 9.54 -> 8.59 / 8.49 us. A third pair after the device mode's inline two-tensor check: Python
+1.56 -> +1.40 us, the device function mode's 1.48 -> 1.37 us, run / bare 1.99 -> 1.65, run+nan 9.39 -> 8.60 us.
Issue 39's second round, the inline path of a plan that only counts (``_Plan.quick``) and of a CPU call: nine runs
alternating with the commit before the round (``--calls 10000 --rounds 7``, three sets over the round's commits):
the emulator's Python beyond the bare mode's 1.32-1.46 (median 1.38) -> 0.86-0.95 us (median 0.88); run / bare
1.64-1.75 (median 1.65) -> 1.43-1.55 (median 1.47; goal 1.5); run+nan extra 7.74-8.27 -> 7.27-7.92 us.
Issue 39's third round (no change to the hot path; the tree at 9e3c0f8 plus ``migrate --verify``'s zygote), nine
runs in a row, ``--calls 10000 --rounds 7``, load average 7-8 on the 2 shared cores: run / bare 1.43-1.48
(median 1.45, worst 1.48; goal <= 1.5 met in all nine), the bare mode's extra 2.64 us, run 3.87 us.
Issue 39's last round (one plan table per mode, the function mode's residence hint; docs/emulation.md), six runs
alternating with the tree before it in the same minutes, ``--calls 10000 --rounds 7 --only-call``, load 5.3-5.8:
median of the per-round run / bare 1.61, 1.57, 1.62, 1.66, 1.66, 1.63 (median 1.625) against 1.69, 1.66, 1.69, 1.71,
1.60, 1.67 (median 1.68); goal <= 1.5 not met at this load. The bare mode's extra 2.48-2.79 us, run 4.05-4.50 us
(before 4.20-4.77 us); the device function mode's share of run's extra 0.29-0.32 (1.16-1.41 us; before 0.29-0.32,
1.26-1.56 us).
Then the direct path (``emulate/direct.py``: a learnt two-tensor call run with the Python key off), five runs
alternating with the tree before the round in the same minutes, same options, load about 5: per-round run / bare
medians 1.11, 1.09, 1.12, 1.07, 1.07 (median 1.09, rounds 0.92-1.19) against 1.67, 1.65, 1.66, 1.65, 1.66 (median
1.66); run's extra 2.81-3.02 us against 4.23-4.53 us, the bare mode's 2.56-2.77 us. The function-mode share line is
negative there: run is cheaper than the dispatch mode alone, which has no direct path.
Then the NaN watch (the direct path under it, one Tensor result checked inline), six runs alternating with the tree
before (e4cf2c6), same options, load 1-3.5: run+nan extra median 6.28 us (6.14-6.45) against 7.71 us (7.58-7.97);
the watch's own share (run+nan - run) 3.68 us (3.61-3.81) against 5.04 us (4.79-5.17).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

sys.path.insert(0, str(Path(__file__).parent))
from run_bench import Bare  # noqa: E402

from mpsready.emulate import Emulator, Target, residence  # noqa: E402
from mpsready.emulate.device import DeviceMode  # noqa: E402
from mpsready.emulate.dispatch import _HANDLE, MPSDispatch  # noqa: E402


def _per_call(fn, calls: int) -> float:
    """Microseconds per call of ``fn`` (run ``calls`` times), CPU time of this thread."""
    t0 = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - t0) / calls * 1e6


def python_costs(calls: int, rounds: int) -> dict[str, float]:
    emu = Emulator(Target("2.13", "15.5"), str(Path(__file__).parent))
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    residence.mark(x)
    residence.mark(y)
    emu_mode, bare, fmode = MPSDispatch(emu), Bare(), DeviceMode(emu)
    # the functions as written: TorchDispatchMode wraps __torch_dispatch__ in a dynamo-disable shim that both pay
    emu_fn = _HANDLE  # without Dynamo's shim until the program imports torch._dynamo (emulate/dispatch.py)
    bare_fn = Bare.__dict__["__torch_dispatch__"].__wrapped__
    add, tadd, args = torch.ops.aten.add.Tensor, torch.add, (x, y)
    fns = {"bare": lambda: bare_fn(bare, add, (), args, {}),
           "emulator": lambda: emu_fn(emu_mode, add, (), args, {}),
           "function mode": lambda: DeviceMode.__torch_function__(fmode, tadd, (), args, {})}
    times: dict[str, list[float]] = {k: [] for k in fns}
    try:
        with torch._C._DisableTorchDispatch():
            for _ in range(rounds + 1):  # the first round warms up
                for k, fn in fns.items():
                    times[k].append(_per_call(fn, calls))
    finally:
        residence.clear()
    return {k: statistics.median(v[1:]) for k, v in times.items()}


def call_costs(calls: int, rounds: int) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Per-call microseconds of ``torch.add`` through the whole stack (medians over the rounds after the first),
    and each round's own figures (``rounds`` lists, the warm-up round dropped). Within a round the set-ups run
    one after the other, in the reverse order every other round (plain, bare, run, run+nan, then run+nan, run,
    bare, plain), so that a change of the machine's load during a round weighs on both sides of each ratio."""
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    names = ("plain", "bare", "run", "run+nan", "run, dynamo loaded", "run, function mode off")
    times: dict[str, list[float]] = {k: [] for k in names}

    def plain() -> None:
        times["plain"].append(_per_call(lambda: torch.add(x, y), calls))

    def bare() -> None:
        with Bare():
            times["bare"].append(_per_call(lambda: torch.add(x, y), calls))

    def emulated(order: int) -> None:
        emu = Emulator(Target("2.13", "15.5"), str(Path(__file__).parent))
        emu.install()
        try:
            xm, ym = x.to("mps"), y.to("mps")
            # the bare mode's first call imported torch._dynamo, so install() put Dynamo's shim on; a program that
            # never imports it runs without (emulate/dispatch.py): both measured
            times["run, dynamo loaded"].append(_per_call(lambda xm=xm, ym=ym: torch.add(xm, ym), calls))
            MPSDispatch.__torch_dispatch__ = _HANDLE
            from mpsready.numerics.hooks import RunWatch

            watch = RunWatch(emu)
            for step in ("run", "function mode off", "run+nan")[::order]:
                if step == "run":
                    times["run"].append(_per_call(lambda xm=xm, ym=ym: torch.add(xm, ym), calls))
                    continue
                if step == "function mode off":  # the dispatch mode alone: the device function mode's share
                    with torch._C.DisableTorchFunction():
                        times["run, function mode off"].append(
                            _per_call(lambda xm=xm, ym=ym: torch.add(xm, ym), calls))
                    continue
                watch.install()
                try:
                    times["run+nan"].append(_per_call(lambda xm=xm, ym=ym: torch.add(xm, ym), calls))
                finally:
                    watch.uninstall()
        finally:
            emu.uninstall()

    for i in range(rounds + 1):  # the first round warms up (a mode's first call imports torch._dynamo)
        if i % 2 == 0:
            plain()
            bare()
            emulated(1)
        else:
            emulated(-1)
            bare()
            plain()
    per_round = {k: v[1:] for k, v in times.items()}
    return {k: statistics.median(v) for k, v in per_round.items()}, per_round


def round_ratios(per_round: dict[str, list[float]]) -> list[float]:
    """Each round's run / bare: ``torch.add``'s extra cost over plain on the emulated device against a bare
    dispatch mode's, both over that round's own plain figure."""
    return [(r - p) / (b - p) for p, b, r in zip(per_round["plain"], per_round["bare"], per_round["run"])]


def spread(values: list[float]) -> str:
    """``median (min-max, quartiles q1-q3)`` of ``values``, two decimals."""
    v = sorted(values)
    if len(v) < 4:
        return f"{statistics.median(v):.2f} ({v[0]:.2f}-{v[-1]:.2f})"
    q = statistics.quantiles(v, n=4)
    return f"{statistics.median(v):.2f} (min-max {v[0]:.2f}-{v[-1]:.2f}, quartiles {q[0]:.2f}-{q[2]:.2f})"


class BareFunctionMode(TorchFunctionMode):
    """A bare observe-only torch function mode: forwards every torch function call unchanged."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def function_mode_costs(calls: int, rounds: int) -> dict[str, dict[str, float]]:
    """Extra microseconds per call over plain, per kind of torch function call on resident tensors, with a bare
    ``TorchFunctionMode`` and with the emulator's (``DeviceMode``) pushed, dispatch off: what the function mode
    costs beside the dispatch mode. Keys: call kind -> {"bare", "device"}."""
    emu = Emulator(Target("2.13", "15.5"), str(Path(__file__).parent))
    x = torch.randn(4, 4, requires_grad=True)
    y = torch.randn(4, 4)
    x.grad = torch.zeros(4, 4)
    for t in (x, y):
        residence.mark(t)
    kinds = {"property read (x.grad)": lambda: x.grad, "C++ function of two tensors (torch.add)": lambda: torch.add(y, y),
             "Python-level function (F.relu)": lambda: F.relu(y)}
    out: dict[str, dict[str, float]] = {}
    try:
        with torch._C._DisableTorchDispatch():
            for kind, fn in kinds.items():
                times: dict[str, list[float]] = {k: [] for k in ("plain", "bare", "device")}
                for _ in range(rounds + 1):  # the first round warms up
                    times["plain"].append(_per_call(fn, calls))
                    with BareFunctionMode():
                        times["bare"].append(_per_call(fn, calls))
                    with DeviceMode(emu):
                        times["device"].append(_per_call(fn, calls))
                med = {k: statistics.median(v[1:]) for k, v in times.items()}
                out[kind] = {k: med[k] - med["plain"] for k in ("bare", "device")}
    finally:
        residence.clear()
    return out


def trace_costs(calls: int, rounds: int) -> dict[str, float]:
    from mpsready.step.runner import StepContext
    from mpsready.trace.recorder import Recorder

    x, y = torch.randn(4, 4), torch.randn(4, 4)
    times: dict[str, list[float]] = {k: [] for k in ("plain", "direct", "two modes")}
    emu = Emulator(Target("2.13", "15.5"), str(Path(__file__).parent), keep_going=True)
    emu.install()
    try:
        xm, ym = x.to("mps"), y.to("mps")
        rec = Recorder([str(Path(__file__).parent)], device="mps", simulate_moves=False,
                       resident=residence.marks_by_id())  # as trace/emulated.py makes it
        ctx = StepContext(device="mps")
        for _ in range(rounds + 1):  # the first round warms up
            times["plain"].append(_per_call(lambda: torch.add(x, y), calls))
            for k, fwd in (("direct", emu.dispatch.forward), ("two modes", None)):
                rec.forward = fwd
                with rec.around_stage(ctx, "forward"):
                    times[k].append(_per_call(lambda: torch.add(xm, ym), calls))
    finally:
        emu.uninstall()
    return {k: statistics.median(v[1:]) for k, v in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--only-call", action="store_true",
                    help="measure only the Python of one call and torch.add through the whole stack")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, median of {args.rounds} interleaved rounds of {args.calls} calls; "
          "CPU time of this thread")
    py = python_costs(args.calls, args.rounds)
    print(f"python of one call: bare mode {py['bare']:.2f} us, emulator {py['emulator']:.2f} us "
          f"(+{py['emulator'] - py['bare']:.2f} us), device function mode {py['function mode']:.2f} us "
          f"(+{py['function mode'] - py['bare']:.2f} us over the bare dispatch mode's)")
    c, per_round = call_costs(max(1, args.calls // 4), args.rounds)
    extra = {k: c[k] - c["plain"] for k in ("bare", "run", "run+nan", "run, dynamo loaded")}
    print(f"torch.add, whole stack: plain {c['plain']:.2f} us; extra: bare mode {extra['bare']:.2f} us, "
          f"run {extra['run']:.2f} us, run+nan {extra['run+nan']:.2f} us, run with torch._dynamo loaded "
          f"{extra['run, dynamo loaded']:.2f} us; run / bare {extra['run'] / extra['bare']:.2f} (goal <= 1.5), "
          f"with torch._dynamo loaded {extra['run, dynamo loaded'] / extra['bare']:.2f}")
    print(f"run / bare per round ({args.rounds} rounds, each over its own plain and bare figures): "
          f"{spread(round_ratios(per_round))}")
    fm = [(r - o) / (r - p) for p, r, o in zip(per_round["plain"], per_round["run"],
                                                per_round["run, function mode off"])]
    print(f"the device function mode's share of run's extra per round (run less the dispatch mode alone, over run's "
          f"extra; below 0 where its direct path, emulate/direct.py, makes run cheaper than the dispatch mode "
          f"alone): {spread(fm)} ({c['run'] - c['run, function mode off']:.2f} us of {extra['run']:.2f} us, medians)")
    if args.only_call:
        return 0
    for kind, v in function_mode_costs(max(1, args.calls // 4), args.rounds).items():
        print(f"function mode, {kind}: extra over plain {v['bare']:.2f} us with a bare TorchFunctionMode, "
              f"{v['device']:.2f} us with the emulator's (its own Python {v['device'] - v['bare']:.2f} us)")
    t = trace_costs(max(1, args.calls // 4), args.rounds)
    print(f"torch.add traced on the emulated device: extra over plain {t['direct'] - t['plain']:.2f} us with the "
          f"recorder handing the call to the emulator's mode, {t['two modes'] - t['plain']:.2f} us through the "
          f"dispatcher to both modes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

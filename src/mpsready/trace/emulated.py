"""Trace on the emulated MPS device (``mpsready trace ENTRY --device mps`` without a Mac).

The step runs on the emulated device of :mod:`mpsready.emulate` (``--keep-going``: nothing raises), with the
recorder attached. Only tensors that reach MPS are judged: the recorder sees the device of each call as
``mps`` for resident tensors and ``cpu`` for the rest, and :func:`mpsready.trace.predict.predict` leaves
CPU calls out. Every call is judged by the same :class:`mpsready.ops.judge.Judge` as ``mpsready run``; a
composite the recorder expands has its results marked resident as the emulator marks them
(:func:`_land_composite`). What the emulator itself judged where the recorder cannot see it goes to the prediction
as :class:`mpsready.trace.judged.DeviceJudgements`, which :func:`~mpsready.trace.predict.predict` turns into ops and
findings with the recorder's calls, in one pass:

* a dtype MPS cannot allocate (float64, complex128; bfloat16/complex64 before macOS 14) at the line where the
  tensor is created on or moved to MPS: these refusals *are* the trace's dtype events (the recorder's own are
  not used on this device), and :func:`~mpsready.trace.predict.predict` turns them into DTY201-DTY204 findings,
  so a NumPy array cast to float32 *before* the move is clean. A move the step runner makes (``Module.to`` of
  the Step's model in ``to_device``, the batch in ``data``) has no line of the user's: the finding then points
  at the line that made the tensor (a float64 ``register_buffer(torch.from_numpy(...))``), as the recorder saw
  it, and names the stage;
* composite-implicit ops MPS runs as a whole (``linalg_svd``: CPU fallback with a warning up to 2.13), whose
  CPU decomposition the recorder is told not to record (OPS102 / OPS101);
* shape rules (ConvTranspose3d before 2.8, ...) (OPS110).
"""

from __future__ import annotations

from typing import Any, Sequence

from mpsready.emulate import Emulator, Failure, Target, residence
from mpsready.emulate.dispatch import land
from mpsready.emulate.residence import on_mps
from mpsready.frames import Frame, UserFrames
from mpsready.step.runner import Observer
from mpsready.trace import rules as R
from mpsready.trace.judged import DeviceJudgements, JudgedCall, WholeOp
from mpsready.trace.model import DtypeEvent, OpTrace


def emulated_trace(entry: Any, torch_v: str, macos: str, fallback: bool, expand, steps: int, sdpa_math,
                   project: str | None, numerics: Any = None,
                   observers: Sequence[Observer] = ()) -> tuple[OpTrace, DeviceJudgements]:
    """``(OpTrace, DeviceJudgements)`` of ``entry`` run on the emulated device (``numerics``: a
    :class:`mpsready.numerics.hooks.TraceWatch` fed by the recorder, or ``None``; ``observers``: more step-runner
    observers, after the recorder, e.g. a benchmark's clock)."""
    from mpsready.step.runner import run_entry
    from mpsready.trace.recorder import Recorder

    roots = [str(entry.root)] + ([str(project)] if project else [])
    link = _Link()
    emu = Emulator(Target(torch_v, macos, fallback), roots[-1] if project else roots[0], keep_going=True,
                   frames=UserFrames(roots), origin_of=link.origin_of)
    rec = Recorder(roots, device="mps", expand=expand, sdpa_math=sdpa_math, simulate_moves=False,
                   numerics=numerics, suppress=link.inside_kernel, expanded_hook=link.landed,
                   resident=residence.marks_by_id())
    link.emu, link.rec = emu, rec
    stages = _FailureStages(emu)
    emu.install()
    # the recorder's mode sits right above the emulator's during each stage: it hands each call to the emulator
    # directly, so a call pays one dispatch mode's machinery, not two (docs/emulation.md, per-call cost)
    rec.forward = emu.dispatch.forward
    try:
        results, _ctx = run_entry(entry, device="mps", steps=steps, observers=[stages, rec, *observers])
    finally:
        emu.uninstall()
    trace = rec.to_trace(entry.spec, [r.to_dict() for r in results])
    trace.settings["emulated"] = True
    refused = allocation_failures(emu.failures, stages.of_failures())
    trace.dtype_events = _dtype_events(refused)  # the recorder sees no move on this device: the emulator judged them
    return trace, device_judgements(emu)


class _Link:
    """The two-way link of one emulated trace: the recorder asks whether the emulated device is inside a kernel
    it runs whole (then nothing is recorded) and hands it the results of the composites it expands; the
    emulator asks the recorder where a tensor was made. Both are made before either can be asked."""

    def __init__(self) -> None:
        self.emu: Emulator | None = None
        self.rec: Any = None

    def inside_kernel(self) -> bool:
        return self.emu is not None and self.emu.inside_kernel > 0

    def origin_of(self, t: Any) -> Frame | None:
        return self.rec.origin_of(t) if self.rec is not None else None

    def landed(self, name: str, args, kwargs, out, depth: int) -> None:
        if self.emu is not None:
            _land_composite(self.emu, name, args, kwargs, out, depth)


def _land_composite(emu: Emulator, name: str, args, kwargs, out, depth: int) -> None:
    """What the emulated device does with the result of a composite it expands itself
    (:func:`mpsready.emulate.dispatch.land`), for a composite the recorder expanded: made from a
    tensor resident on MPS (or inside a factory or move onto MPS), its results are resident too, after the
    dtype of each is judged as an allocation (``zeros_like(x, dtype=torch.float64)``). Without this, a factory
    callee (``empty_strided`` inside ``ones_like``) left the result on the CPU, and with it autograd's seed
    gradient and every backward op fed only by it."""
    import torch

    ins = [t for t in _flat(args) + _flat(kwargs.values()) if isinstance(t, torch.Tensor)]
    if emu.creating > 0 or any(on_mps(t) for t in ins):
        land(emu, out if isinstance(out, (list, tuple)) else [out], name, ins, depth)


def _flat(values) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(v)
        else:
            out.append(v)
    return out


class _FailureStages(Observer):
    """Which step stage each of the emulator's failures happened in (``of_failures()[i]`` for ``failures[i]``)."""

    def __init__(self, emu: Emulator):
        self.emu = emu
        self.starts: list[tuple[int, str]] = []

    def stage_started(self, ctx, stage: str) -> None:
        self.starts.append((len(self.emu.failures), stage))

    def of_failures(self) -> list[str | None]:
        out: list[str | None] = []
        for i in range(len(self.emu.failures)):
            stage = None
            for first, name in self.starts:
                if first <= i:
                    stage = name
            out.append(stage)
        return out


def allocation_failures(failures: Sequence[Failure], stage_of: Sequence[str | None]) -> list[tuple[Failure, str | None]]:
    """``(Failure, stage)`` for each dtype MPS refuses to allocate among ``failures`` (``stage_of[i]``: the stage
    of ``failures[i]``), in the order met, without the restatements: ``torch.load(map_location=device)`` in the
    runner's ``checkpoint`` stage restores the state the step saved, so a refusal there of a dtype already
    refused earlier is the same tensor again (a Mac never had it on MPS to save)."""
    out = []
    failed_dtypes: set[str] = set()
    for i, f in enumerate(failures):
        j = f.judgement
        if not (j.kind == "dtype" and j.dtype in R.DTYPE_RULE_CODES and j.exception == "TypeError"):
            continue
        stage = stage_of[i] if i < len(stage_of) else None
        if stage == "checkpoint" and f.frame is None and j.dtype in failed_dtypes:
            continue
        failed_dtypes.add(j.dtype or "")  # never empty: DTYPE_RULE_CODES holds it
        out.append((f, stage))
    return out


def _dtype_events(refused: Sequence[tuple[Failure, str | None]]) -> list[DtypeEvent]:
    """The emulator's allocation refusals as the trace's dtype events (``origin_frame``: the line that made a
    tensor the runner moved), so reports can name where to cast."""
    return [DtypeEvent(dtype=f.judgement.dtype or "", stage=stage or "step", op=f.judgement.named or f.judgement.op,
                       how="created", frame=f.frame, origin_frame=f.origin)
            for f, stage in refused]


def device_judgements(emu: Emulator) -> DeviceJudgements:
    """What ``emu`` judged that the recorder cannot see (:mod:`mpsready.trace.judged`): its records of the
    composite-implicit ops it runs whole, and its failures."""
    from mpsready.ops.judge import Judgement

    whole = set(emu.cia_ops)
    return DeviceJudgements(
        whole=tuple(WholeOp(Judgement(r.op, r.outcome, r.kind, None, r.message, None, r.fixed_in, r.named),
                            r.calls, r.seconds, tuple(r.dtypes), r.frame)
                    for r in emu.records.values() if r.op in whole),
        failures=tuple(JudgedCall(f.judgement, f.frame) for f in emu.failures))

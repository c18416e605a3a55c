"""The state of one emulated Mac: the target, what was judged, what failed, fell back, and when to stop.

:class:`Emulator` is what the modes (:mod:`~mpsready.emulate.device`, :mod:`~mpsready.emulate.dispatch`)
report to. It asks :class:`mpsready.ops.judge.Judge` for every decision and only keeps the results:
per-op predictions with counts and seconds, fallbacks with their share of the run's time, the failures a
Mac would raise with the user's file and line. ``install()`` puts the whole device model in place;
``uninstall()`` takes it away again.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from mpsready.ops.advisories import Advisory, AdvisoryIndex
from mpsready.ops.judge import Judge, Judgement
from mpsready.frames import Frame, UserFrames


# The attribute that marks an exception as one a Mac raises at that call (set by the emulator on what it raises,
# and on the CUDA errors a non-CUDA build raises there too; :func:`mac_error_kind` reads it). Any exception
# without it is the program's own (a missing module, a missing file): it says nothing about the Mac.
MAC_ERROR_ATTR = "_mpsready_mac_failure"


def mark_mac_error(exc: BaseException, kind: str) -> BaseException:
    """Mark ``exc`` as raised on a Mac too, with ``kind`` (``cuda_api``, ``mps_api``, ``mps_unavailable`` or a
    :class:`~mpsready.ops.judge.Judgement` kind); returns ``exc``. An exception object whose attributes cannot be
    set (none of Python's or PyTorch's) is returned unmarked."""
    try:
        setattr(exc, MAC_ERROR_ATTR, kind)
    except (AttributeError, TypeError):
        pass
    return exc


def mac_error_kind(exc: BaseException | None) -> str | None:
    """The kind the emulator marked ``exc`` with (also through ``raise ... from`` and implicit chaining, up to 8
    links), or ``None``: the program's own exception, not a Mac prediction."""
    seen = 0
    while exc is not None and seen < 8:
        kind = getattr(exc, MAC_ERROR_ATTR, None)
        if isinstance(kind, str):
            return kind
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def cuda_origin(exc: BaseException) -> bool:
    """True when ``exc`` was raised inside ``torch.cuda`` itself (e.g. ``torch.cuda.set_device`` reaching a
    ``torch._C._cuda_*`` function a non-CUDA build lacks): that code runs the same on a Mac's build."""
    import torch.cuda

    pkg = os.path.dirname(os.path.abspath(torch.cuda.__file__)) + os.sep
    tb = traceback.extract_tb(exc.__traceback__)
    return bool(tb) and os.path.abspath(tb[-1].filename).startswith(pkg)


_PICKLING_TEXTS = ("Can't pickle", "Can't get local object", "cannot pickle", "attribute lookup")


def mac_fact_origin(exc: BaseException) -> str | None:
    """The Mac failure kind of an exception the emulator did not raise but a fact of the Mac it imposes caused,
    or ``None`` (the program's own):

    * ``cuda_api``: raised inside ``torch.cuda`` itself (:func:`cuda_origin`);
    * ``spawn``: a pickling error while starting a child process by ``spawn`` (``multiprocessing``'s
      ``popen_spawn_posix``/``reduction.dump`` on the stack). Linux forks by default, macOS spawns (Python 3.8+,
      docs of ``multiprocessing``: "contexts and start methods"), and the emulated Mac spawns: a lambda or a local
      function handed to a DataLoader worker or a Pool is refused there as on the Mac;

    Not here: an ``AttributeError`` of ``torch.mps`` raised inside PyTorch's own code (release_api marks it)."""
    if cuda_origin(exc):
        return "cuda_api"
    mp = os.sep + "multiprocessing" + os.sep
    frames = [os.path.basename(f.filename) + ":" + f.name for f in traceback.extract_tb(exc.__traceback__)
              if mp in f.filename]
    if (multiprocessing.get_start_method(allow_none=True) == "spawn"
            and any(f.startswith("popen_spawn_posix.py:") or f == "reduction.py:dump" for f in frames)
            and any(t in str(exc) for t in _PICKLING_TEXTS)):
        return "spawn"
    return None


class StopRun(BaseException):
    """Raised into the program to end it cleanly at ``--max-steps`` or ``--time-limit``. A BaseException, like
    KeyboardInterrupt, so that the program's own ``except Exception`` does not swallow it."""


@dataclass(frozen=True)
class Target:
    """The Mac emulated: ``torch`` as asked (``"2.5"``), ``macos`` (``"14.4"``), whether
    ``PYTORCH_ENABLE_MPS_FALLBACK=1`` is set there (``fallback``), and the machine (``"arm64"``: Apple silicon;
    ``"x86_64"``: an Intel Mac with an AMD GPU, torch 2.2 only: :data:`mpsready.ops.judge.MACHINES`)."""

    torch: str
    macos: str
    fallback: bool = False
    machine: str = "arm64"


@dataclass
class Failure:
    """A call that fails on the Mac, where the program made it (``frame``: innermost user frame; ``stack``:
    the user's frames, outermost first, as ``path:line in function``; ``origin``: for a tensor moved to MPS,
    the user's line that made it, when :attr:`Emulator.origin_of` knows it)."""

    judgement: Judgement
    frame: Frame | None
    stack: list[str]
    op_called: str
    origin: Frame | None = None

    def to_dict(self) -> dict[str, Any]:
        j = self.judgement
        return {"kind": j.kind, "op": j.named or j.op, "called_as": self.op_called, "dtype": j.dtype,
                # an abort raises nothing on a Mac: the emulator's MacCrash stands for it
                "exception": j.exception or ("MacCrash" if j.outcome == "crash" else None), "message": j.message,
                "effect": j.outcome, "fixed_in": j.fixed_in,
                "source": j.source, "basis": "predicted",
                "location": self.frame.to_dict() if self.frame else None, "stack": self.stack,
                **({"origin": self.origin.to_dict()} if self.origin else {})}


@dataclass
class OpRecord:
    """All calls of one MPS op with one outcome: counts, wall seconds here (on this CPU) and where first seen."""

    op: str
    outcome: str
    kind: str | None
    dtypes: list[str] = field(default_factory=list)
    calls: int = 0
    seconds: float = 0.0
    frame: Frame | None = None
    message: str | None = None
    fixed_in: str | None = None
    named: str | None = None


class Emulator:
    """One emulated MPS device for one target (see the module docstring).

    ``root``: the directory whose files are the user's program (for file and line). ``keep_going``: record a
    predicted failure and compute the call on the CPU instead of raising it. ``max_steps``: stop after that
    many optimizer steps; ``time_limit``: stop after that many seconds (both raise :class:`StopRun`).
    ``frames``: the user-frame finder to use (one for ``root`` otherwise); ``origin_of``: where a tensor was
    made (``tensor -> Frame | None``), asked for the tensor of a failing move. Raises ``ValueError`` for a
    target release without a table.
    """

    def __init__(self, target: Target, root: str, keep_going: bool = False, max_steps: int | None = None,
                 time_limit: float | None = None, frames: UserFrames | None = None,
                 origin_of: Callable[[Any], Frame | None] | None = None):
        self.target = target
        self.judge = Judge(target.torch, target.macos, target.fallback, target.machine)
        self.frames = frames if frames is not None else UserFrames(root)
        # known silent wrong results of the target (mps_wrong_results.yaml); dispatch.py asks it per call
        self.advisories = AdvisoryIndex(self.judge.torch, target.macos)
        self.wrong_results: list[dict[str, Any]] = []  # one entry per (advisory id, user's file:line)
        self._wrong_at: dict[tuple, dict[str, Any]] = {}
        import torch as _torch

        from mpsready import versions

        # composites expand exactly only when the installed torch is the target release (same minor)
        self.exact_composites = versions.release(_torch.__version__)[:2] == versions.release(self.judge.torch)[:2]
        self.root = os.path.abspath(root)
        self.keep_going = keep_going
        self.max_steps = max_steps
        self.time_limit = time_limit
        self.pid = os.getpid()
        self.records: dict[tuple, OpRecord] = {}
        self.failures: list[Failure] = []
        self.raised: dict[int, Failure] = {}  # id(exception) -> the failure it carries
        self.steps = 0
        # a program that builds no torch.optim optimizer ends a step at each backward pass (steps.py)
        self.optimizer_made = False
        self.backwards = 0
        self.started = time.perf_counter()
        self.deadline = None if time_limit is None else self.started + time_limit
        self.stop_reason: str | None = None
        self.creating = 0  # > 0 inside a factory or move whose results land on MPS
        # sys.platform, platform.*, os.uname() answer as the Mac in the program's own files, and its threads get
        # the emulated device (identity.py); False leaves both as this machine has them
        self.mac_identity = True
        # the program's own files read torch.__version__ (the target's, release_api.py), not this build's
        self.version_seen = False
        self.placed = 0  # tensors created on or moved to MPS (device.py), computed with or not
        # id -> tensor: the CPU tensors the program passed, beside tensors on MPS, into the torch call now running
        # (and views of them): the only tensors the placement check calls CPU tensors (device.py, dispatch.py)
        self.cpu_operands: dict[int, Any] = {}
        self.inside_kernel = 0  # > 0 inside an MPS kernel (or CPU fallback) of a composite-implicit op
        self.default_mps = False  # torch.set_default_device("mps")
        self.cia_ops: list[str] = []  # composite-implicit ops judged whole (cia.py)
        self.autocast_used = False  # the program entered torch.autocast("mps") (autocast.py)
        self.memory_queried = False
        self.numerics: Any = None  # mpsready.numerics.hooks.RunWatch, fed by dispatch.py per judged call
        self.dispatch: Any = None  # the installed aten-level mode (dispatch.MPSDispatch), set by install()
        # True while that mode is off this thread's dispatch stack because nothing is resident (emulate/dormant.py)
        self.dormant = False
        self._warned: set[str] = set()
        # where a tensor moved to MPS was made (the trace's recorder knows; mpsready run does not ask)
        self.origin_of = origin_of
        self._failed: set[tuple] = set()
        self._installed: list[Any] = []
        # > 0 while a function compiled by torch.compile runs (eagerly) on MPS: dispatch.py adds each judged call
        # to ``compiled_ops`` as (op, dtype, pointwise | view | other); release_api.py judges the region after
        self.generators = True  # judge the device of an explicit generator= (Judge.generator)
        # set by device.py around a torch call given generator=: whether the program's generator is on MPS
        self.generator_bound = False
        self.generator_mps = False
        self.generator_restored = False  # ... and was restored with set_state (mps_wrong_results.yaml)
        self.compiling = 0
        self.compiled_ops: set[tuple[str, str, str]] = set()
        # calls of the current region matched by a compiled wrong-result advisory (Inductor's code for them is known)
        self.compiled_named: set[str] = set()
        # regions the emulated Mac cannot vouch for (Judge.compile_region): one entry per user's line
        self.unverified_regions: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ install
    def install(self) -> None:
        """Put the device model in place in this process (torch API, the two modes, CIA kernels, hooks)."""
        from mpsready.emulate import autocast, cia, device, dispatch, identity, release_api, residence, torch_api

        residence.clear()
        self._installed = [torch_api.install(self), autocast.install(self), release_api.install(self), cia.install(self),
                           dispatch.install(self), device.install(self)]
        if self.mac_identity:
            self._installed.append(identity.install(self))

    def uninstall(self) -> None:
        from mpsready.emulate import residence

        for undo in reversed(self._installed):
            undo()
        self._installed = []
        residence.clear()

    # ------------------------------------------------------------------ limits
    def owner(self) -> bool:
        """False in a forked DataLoader worker: only the program's own process stops or records."""
        return os.getpid() == self.pid

    def step_done(self) -> None:
        self.steps += 1
        if self.max_steps is not None and self.steps >= self.max_steps and self.owner():
            self.stop_reason = f"--max-steps {self.max_steps} reached (optimizer steps)"
            raise StopRun(self.stop_reason)
        self.check_time()

    def backward_starting(self) -> None:
        """A backward pass starts. In a program that has built no optimizer, each earlier backward pass ended one
        step: ``--max-steps N`` stops the program as the N+1-th starts (steps.py)."""
        if self.optimizer_made or self.max_steps is None or not self.owner():
            return
        if self.backwards >= self.max_steps:
            self.stop_reason = (f"--max-steps {self.max_steps} reached (backward passes: the program builds no "
                                "torch.optim optimizer)")
            raise StopRun(self.stop_reason)
        self.backwards += 1

    def check_time(self) -> None:
        if self.deadline is not None and time.perf_counter() > self.deadline and self.owner():
            self.stop_reason = f"--time-limit {self.time_limit:g} s reached"
            self.deadline = None  # raise once; the program's clean-up may dispatch more ops
            raise StopRun(self.stop_reason)

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    # ------------------------------------------------------------------ judgements
    def note(self, j: Judgement, called: str, dtype: str | None, seconds: float, frame: Frame | None) -> OpRecord:
        """Count one judged call; returns its record (the dispatch mode counts later calls of the same kind on
        it directly)."""
        key = (j.op, j.outcome, j.kind, j.named)
        rec = self.records.get(key)
        if rec is None:
            rec = self.records[key] = OpRecord(op=j.op, outcome=j.outcome, kind=j.kind, frame=frame,
                                               message=j.message, fixed_in=j.fixed_in, named=j.named)
        rec.calls += 1
        rec.seconds += seconds
        if dtype and dtype not in rec.dtypes:
            rec.dtypes.append(dtype)
        if rec.frame is None and frame is not None:
            rec.frame = frame
        return rec

    def note_wrong_result(self, adv: Advisory, frame: Frame | None) -> None:
        """A call that completes but matches a known wrong-result advisory: one entry per (advisory id, user's
        file:line), ``calls`` counting the matching calls there. Only the program's own process records."""
        if not self.owner():
            return
        key = (adv.id, frame.path if frame else None, frame.line if frame else None)
        hit = self._wrong_at.get(key)
        if hit is None:
            hit = self._wrong_at[key] = {**adv.to_dict(), "location": frame.to_dict() if frame else None,
                                         "calls": 0, "basis": "predicted"}
            self.wrong_results.append(hit)
        hit["calls"] += 1

    def note_unverified_region(self, reason: str, frame: Frame | None, kind: str = "compile",
                               op: str = "torch.compile") -> None:
        """A compiled region that ran here but that the emulated Mac cannot vouch for (or another call it cannot
        run: ``kind`` ``metal_shader``, the program's own Metal kernels): one entry per reason and user's line
        (``calls`` counts the region's calls there). Only the program's own process records."""
        if not self.owner():
            return
        where = frame.to_dict() if frame else None
        for e in self.unverified_regions:
            if e["reason"] == reason and e["location"] == where:
                e["calls"] += 1
                return
        self.unverified_regions.append({"kind": kind, "op": op, "reason": reason,
                                        "location": where, "calls": 1, "basis": "predicted"})

    def note_regime(self, regime: Advisory, frame: Frame | None) -> None:
        """A completed call in a regime the data cannot vouch for (``mps_unverified_regimes.yaml``, matched by
        :meth:`AdvisoryIndex.regime`): an ``unverified`` entry of kind ``regime`` at the user's line, its reason the
        regime's summary, the target release, the regime's id and its public report."""
        if regime.id.startswith("envelope-"):  # outside what the MPS tests exercise (ops/envelope.py)
            reason = f"{regime.summary}: not verified on torch {self.judge.torch} (regime {regime.id})"
        else:
            reason = (f"{regime.summary}; no fix recorded for torch {self.judge.torch}: not verified "
                      f"(regime {regime.id}, {regime.report})")
        self.note_unverified_region(reason, frame, kind="regime", op=regime.op or regime.ops[0])

    def unverified(self) -> list[dict[str, Any]]:
        """Every call on the program's path that the emulated Mac judged on no data (:meth:`Judge.basis`
        ``"none"``: an op unknown to the target's table, a callee of a composite decomposed by another release)
        and every compiled region it cannot vouch for: ``kind``, ``op``, ``reason``, ``location``, ``calls``.
        Any of them makes a run that would have completed ``unverified``."""
        out = []
        # a size regime at a line where a wrong-result advisory is named is vouched for: the data says what the
        # Mac does there (a 65537-channel convolution on 2.3 completes with a named wrong result)
        named_at = {str(w.get("location")) for w in self.wrong_results}
        for r in self.records.values():
            if r.outcome != "unknown":
                continue
            if r.kind == "size_regime" and str(r.frame.to_dict() if r.frame else None) in named_at:
                continue
            if r.kind == "callee_of_other_release":
                import torch as _torch

                why = (f"reached inside a composite as torch {_torch.__version__} decomposes it; torch "
                       f"{self.judge.torch}'s table gives it no MPS kernel, but that release's own decomposition "
                       "may not call it: not judged")
            else:
                reason = self.judge.reason(Judgement(r.op, r.outcome, r.kind, message=r.message))
                why = reason.detail if reason else (r.message or "no data")
            out.append({"kind": r.kind or "unknown", "op": r.named or r.op, "dtypes": list(r.dtypes),
                        "reason": why,
                        "location": r.frame.to_dict() if r.frame else None, "calls": r.calls,
                        "basis": "predicted"})
        return out + [dict(e) for e in self.unverified_regions]

    def judged_by_basis(self) -> dict[str, int]:
        """Calls judged on the emulated device by what their judgement rests on (:meth:`Judge.basis`):
        ``{"facts": N, "defaults": M, "none": K}``."""
        counts = {"facts": 0, "defaults": 0, "none": 0}
        for r in self.records.values():
            counts[self.judge.basis(r.op, r.outcome, r.kind)] += r.calls
        # of those, the calls in a regime the data cannot vouch for (note_regime): counted apart as well
        counts["regime"] = sum(e["calls"] for e in self.unverified_regions if e["kind"] == "regime")
        return counts

    def warn_fallback(self, j: Judgement) -> None:
        """MPS's fallback UserWarning, once per op as TORCH_WARN_ONCE does (MPSFallback.mm)."""
        name = j.named or j.op
        if name in self._warned or not j.message:
            return
        self._warned.add(name)
        frame = self.frames.locate(2)
        if frame is None:
            warnings.warn(j.message, UserWarning, stacklevel=3)
        else:  # at the user's line, as the C++ TORCH_WARN_ONCE surfaces in Python
            warnings.warn_explicit(j.message, UserWarning, os.path.join(self.root, frame.path), frame.line)

    def fail(self, j: Judgement, called: str, source: Any = None) -> BaseException | None:
        """A call that fails on the Mac. Returns the exception to raise (None with ``keep_going``, or for a
        crash under ``keep_going``). A crash without ``keep_going`` ends the program as the abort would.
        ``source``: the tensor a failing move copies (its origin is looked up with :attr:`origin_of`)."""
        frame = self.frames.locate(2)
        origin = self.origin_of(source) if source is not None and self.origin_of is not None else None
        failure = Failure(j, frame, self._user_stack(), called, origin)
        # two float64 buffers moved by one Module.to are two entries: they are made at two lines
        key = (j.kind, j.named or j.op, j.dtype, frame, origin)
        if self.owner() and key not in self._failed:  # --keep-going: one entry per op, dtype and line
            self._failed.add(key)
            self.failures.append(failure)
        self.note(j, called, j.dtype, 0.0, frame)
        if self.keep_going:
            return None
        if j.outcome == "crash":
            exc: BaseException = MacCrash(j.message or "process aborted")
        else:
            cls = {"NotImplementedError": NotImplementedError, "TypeError": TypeError}.get(j.exception or "",
                                                                                            RuntimeError)
            exc = cls(j.message)
        mark_mac_error(exc, j.kind or "error")
        self.raised[id(exc)] = failure
        return exc

    def _user_stack(self) -> list[str]:
        out = []
        files = self.frames.files
        for fs in traceback.extract_stack()[:-3]:
            rel = files.relative(fs.filename)
            if rel is not None:
                out.append(f"{rel}:{fs.lineno} in {fs.name}")
        return out[-12:]

    def failure_of(self, exc: BaseException | None) -> Failure | None:
        """The predicted failure ``exc`` carries, if the emulator raised it (also through ``raise ... from``)."""
        seen = 0
        while exc is not None and seen < 8:
            hit = self.raised.get(id(exc))
            if hit is not None:
                return hit
            exc = exc.__cause__ or exc.__context__
            seen += 1
        return None

    def failures_of(self, kind: str) -> list[Failure]:
        return [f for f in self.failures if f.judgement.kind == kind]

    def fallbacks(self) -> list[OpRecord]:
        return sorted((r for r in self.records.values() if r.outcome == "fallback"), key=lambda r: -r.seconds)


class MacCrash(BaseException):
    """The process would abort on the Mac here (an MPSNDArray assertion): nothing in the program may catch it."""

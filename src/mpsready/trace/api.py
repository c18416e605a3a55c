"""Library entry point: trace an ENTRY and predict its MPS behaviour.

``mpsready check`` (report stage) calls :func:`trace_entry`; the CLI does the same.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpsready.errors import ExitCode
from mpsready.findings import Severity
from mpsready.schema import envelope
from mpsready.trace.model import OpTrace
from mpsready.trace.predict import DEFAULT_MACOS, Prediction, predict

SCHEMA_NAME = "mpsready.trace"
SCHEMA_VERSION = 1


@dataclass
class TraceResult:
    """A recorded trace and its prediction for one target (``prediction.torch``, ``prediction.macos``).

    Every result in it is a prediction (``basis: "predicted"``): the step ran on ``trace.device``
    (``mps`` with ``trace.emulated``: the emulated MPS device, computed on this CPU), never on a Mac's MPS
    unless this machine is one.
    """

    trace: OpTrace
    prediction: Prediction

    @property
    def findings(self):
        return self.prediction.findings

    @property
    def exit_code(self) -> int:
        """1 when a predicted error or a dtype blocker exists, else 0."""
        blocked = any(f.severity is Severity.BLOCKER for f in self.prediction.findings)
        return int(ExitCode.FINDINGS if blocked else ExitCode.OK)

    def to_dict(self) -> dict[str, Any]:
        """The ``mpsready.trace`` v1 JSON document (see docs/trace.md)."""
        p = self.prediction
        emu = {"emulated": True} if self.trace.emulated else {}  # observed on the emulated device, not a Mac
        return envelope(
            SCHEMA_NAME, SCHEMA_VERSION,
            basis="predicted",
            entry=self.trace.entry,
            traced_on={"device": self.trace.device, "emulated": self.trace.emulated,
                       "torch": self.trace.torch_version, "basis": "observed"},
            target={"torch": p.torch, "macos": p.macos, "mps_fallback": p.fallback, "basis": "predicted"},
            stages=[dict(s, basis="observed", device=self.trace.device, **emu) for s in self.trace.stages],
            ops=[o.to_dict() for o in p.ops],
            dtype_events=[dict(e.to_dict(), basis="observed", device=self.trace.device, **emu)
                          for e in self.trace.dtype_events],
            findings=[f.to_dict() for f in p.findings],
            numerics=self.trace.settings.get("numerics"),
            summary=dict(p.summary, basis="predicted"),
            exit_code=self.exit_code,
            trace=self.trace.to_dict(),
        )


def installed_torch_version() -> str:
    """The installed PyTorch version, without importing torch (importlib.metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return "2.13.0"


def default_fallback() -> bool:
    """Whether PYTORCH_ENABLE_MPS_FALLBACK=1 is set in this environment (then assumed for the target)."""
    return os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK", "") == "1"


def sdpa_math_stages(db: Any) -> str | None:
    """Where MPS runs scaled_dot_product_attention as the math decomposition, per the support data's
    routing of the fused CPU kernel: ``"all"`` (no MPS attention kernel in that release), ``"grad"``
    (``_scaled_dot_product_attention_math_for_mps`` only without grad), or ``None``."""
    info = db.route_info("_scaled_dot_product_flash_attention_for_cpu") or {}
    math = "_scaled_dot_product_attention_math"
    if info.get("to") == math:
        return "all"
    if info.get("otherwise") == math:
        return "grad"
    return None


def _load_entry_or_failing_build(spec: str, cwd: str | None):
    """The ENTRY's :class:`~mpsready.step.Entry`; when importing the user's module raises (or calls
    ``sys.exit``, as a script that parses its arguments at import does), an entry whose build raises
    that error instead, so the failure lands in the build stage (OPS108), as ``mpsready record`` does,
    rather than as a raw traceback or a foreign exit status. A malformed or missing ENTRY still raises
    :class:`~mpsready.step.EntryError`."""
    from mpsready.step import Entry, EntryError, load_entry

    try:
        return load_entry(spec, cwd=cwd)
    except EntryError:
        raise
    except (Exception, SystemExit) as exc:
        error = exc if isinstance(exc, Exception) else RuntimeError(
            f"the module called sys.exit({exc.code!r}) while being imported")

        def import_failed():
            raise error

        import_failed.__qualname__ = import_failed.__name__ = "import_failed"
        return Entry(spec=spec, function=import_failed, root=Path(cwd or os.getcwd()).resolve(), source_file=None)


DEFAULT_DEVICE = "mps"  # the emulated MPS device without a Mac, the real one on a Mac


def trace_entry(spec: Any, torch: str | None = None, macos: str = DEFAULT_MACOS, device: str = DEFAULT_DEVICE,
                fallback: bool | None = None, steps: int = 1, cwd: str | None = None,
                project: str | None = None, nan_check: bool = True) -> TraceResult:
    """Run the step named by ``spec`` (an ENTRY string or a loaded :class:`mpsready.step.Entry`) on
    ``device`` with the recorder attached, and classify it for PyTorch ``torch`` (default: installed)
    and macOS ``macos``.

    ``device``: ``mps`` (default) runs the step on the emulated MPS device of :mod:`mpsready.emulate` when
    ``torch.backends.mps.is_available()`` is false here, so only tensors that reach MPS are judged and the
    project's ``device.type == "mps"`` branches are taken; on a Mac it runs on the real device. ``cpu`` is
    the CPU trace (every op of the step stages judged as the CPU dispatches it), ``cuda`` a CUDA trace.

    ``cwd``: the directory ENTRY is resolved against. ``project``: the project the step exercises
    (default: ``cwd`` when given, as ``mpsready check PATH`` gives it); files under it count as
    the user's code, so locations point into the project even when the ENTRY file lies outside it.

    Raises :class:`mpsready.step.EntryError` (a UsageError) for a bad ENTRY and ``ValueError`` for a
    torch version outside the shipped tables. Failures of the user's step are not raised: they are
    in ``result.trace.stages`` and as OPS108 findings.

    ``nan_check`` (default on; ``--no-nan-check``): the first op whose result held NaN/Inf from finite inputs
    (NUM301); input shapes per op and line are counted always (PRF301, from 3 steps on). Both are in the
    document's ``numerics`` (:mod:`mpsready.numerics.hooks`).
    """
    from mpsready.ops.api import load_db
    from mpsready.trace.recorder import record_entry

    from mpsready import versions

    target = torch or installed_torch_version()
    db = load_db(target)
    versions.release(macos)  # ValueError on a malformed macOS version, before the step runs
    entry = _load_entry_or_failing_build(spec, cwd) if isinstance(spec, str) else spec
    fb = default_fallback() if fallback is None else fallback
    composite: dict[str, bool] = {}

    def expand(name: str) -> bool:
        v = composite.get(name)
        if v is None:
            v = composite[name] = db.lookup(name).status == "composite"
        return v

    from mpsready.numerics.hooks import TraceWatch

    kind = device.split(":")[0]
    emulated = kind == "mps" and not _real_mps()
    watch = TraceWatch(nan_check=nan_check, deferred=kind == "cuda" or (kind == "mps" and not emulated),
                       device_of=_emulated_device if emulated else None)
    if emulated:
        from mpsready.trace.emulated import emulated_trace

        trace, judged = emulated_trace(entry, target, macos, fb, expand, steps, sdpa_math_stages(db),
                                       project or cwd, numerics=watch)
        result = TraceResult(trace=trace, prediction=predict(trace, torch=target, macos=macos, fallback=fb,
                                                             emulated=judged))
    else:
        trace = record_entry(entry, device=device, expand=expand, steps=steps, sdpa_math=sdpa_math_stages(db),
                             project=project or cwd, numerics=watch)
        result = TraceResult(trace=trace, prediction=predict(trace, torch=target, macos=macos, fallback=fb))
    _add_numerics(result, watch)
    return result


def _add_numerics(result: TraceResult, watch: Any) -> None:
    """The watch's ``numerics`` in the trace's settings, its findings (NUM301, PRF301) in the prediction."""
    from mpsready.findings import sort_findings
    from mpsready.numerics.hooks import watch_findings

    result.trace.settings["numerics"] = watch.to_dict()
    result.prediction.findings = sort_findings(result.prediction.findings
                                               + watch_findings(watch.watch, result.trace.device_label))


def _emulated_device(t: Any) -> str:
    """``mps`` for a tensor resident on the emulated MPS device, else its own device (a CPU call of the program)."""
    from mpsready.emulate.residence import on_mps

    return "mps" if on_mps(t) else t.device.type


def _real_mps() -> bool:
    import torch

    return bool(torch.backends.mps.is_available())

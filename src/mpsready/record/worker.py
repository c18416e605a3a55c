"""The child process of ``mpsready record``: ``main([SPEC.json])``, started by :func:`mpsready.childproc.command`
(nothing of the user's importable until the entry is loaded; ``python -m mpsready.record.worker SPEC.json``
also works).

It runs the entry with the shared step runner and streams everything to files as it goes,
so that when the process dies (``abort()``, a segfault, the OOM killer) the parent still
knows which stage was running:

* ``spec["events"]``: JSON lines ``{"event": ...}``, flushed after every line:
  ``started``, ``env``, ``precision``, ``form``, ``inputs``, ``stage_started``, ``stage_finished``
  (with the stage's result so far), ``step`` (per-step metrics), ``entry_error``,
  ``device_error`` and finally ``done`` (stage results, fallback counts, random operators, warnings);
* ``<out>/tensors.jsonl``: one tensor entry per line (:class:`mpsready.record.layout.TensorEntry`),
  each flushed as it is written;
* ``<out>/tensors/step-NNNN.safetensors`` with ``save_tensors``.

The spec (written by :func:`mpsready.record.recorder.record_entry`) has ``entry``, ``device``,
``steps``, ``seed``, ``out``, ``events``, ``cwd``, ``save_tensors``, ``float64``,
``synthetic`` (the ``inputs`` section of a previous record, or null), ``project``, ``keep_output``
(keep warning texts; otherwise only ``warning_counts`` by category), ``nan_check`` (default true: when a
recorded tensor held NaN/Inf, the steps are run again up to that step with the op-level check,
:func:`mpsready.record.numerics_hook.locate_nonfinite`) and ``save_inputs`` (a layer name, or null).
"""

from __future__ import annotations

import json
import os
import random
import sys
import warnings
from pathlib import Path
from typing import Any

from mpsready.record.layout import RAW_DIR, TENSORS, raw_file


class Streams:
    """Line-flushed writers for events and tensor entries."""

    def __init__(self, events: Path, out: Path):
        self._ev = events.open("a", encoding="utf-8")
        self._tn = (out / TENSORS).open("a", encoding="utf-8")
        self.out = out

    def event(self, doc: dict) -> None:
        self._ev.write(json.dumps(doc, default=str) + "\n")
        self._ev.flush()

    def tensor(self, doc: dict) -> None:
        # flushed per line: after a crash the last layer that produced an output is on record
        self._tn.write(json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n")
        self._tn.flush()

    def raw(self, step: int, tensors: dict) -> None:
        from safetensors.torch import save_file

        (self.out / RAW_DIR).mkdir(exist_ok=True)
        ok = {k: v for k, v in tensors.items() if not v.is_complex()}  # safetensors has no complex dtype
        save_file(ok, str(self.out / raw_file(step)))

    def close(self) -> None:
        for fh in (self._ev, self._tn):
            if not fh.closed:
                fh.close()


def seed_everything(seed: int) -> str:
    """Seed Python, NumPy (if importable) and torch (all devices); returns how it was done."""
    import torch

    random.seed(seed)
    how = ["random.seed"]
    try:
        import numpy

        numpy.random.seed(seed)
        how.append("numpy.random.seed")
    except ImportError:
        pass
    torch.manual_seed(seed)  # "Sets the seed for generating random numbers on all devices" (torch docs 2.13)
    how.append("torch.manual_seed (all devices)")
    return ", ".join(how) + " in the worker process, before the entry was called"


def watch_parent() -> None:
    """End this process group when the parent (``mpsready record``) dies: :func:`mpsready.childproc.watch_parent`
    (a pipe from the parent; on Linux also ``PR_SET_PDEATHSIG``)."""
    from mpsready.childproc import watch_parent as watch

    watch()


def run(spec: dict[str, Any], mps_backend: Any = None) -> int:
    """Run one recording described by ``spec`` (module docstring). Returns the exit status.

    ``mps_backend`` replaces :class:`mpsready.record.mps.TorchMPS` (tests pass a fake; with a
    fake, fallback counting is done for the fake's ``device_type``).
    """
    streams = Streams(Path(spec["events"]), Path(spec["out"]))
    try:
        return _run(spec, streams, mps_backend)
    finally:
        streams.close()


def _run(spec: dict[str, Any], streams: Streams, mps_backend: Any) -> int:
    streams.event({"event": "started", "pid": os.getpid()})
    from mpsready.env.collect import collect_env

    streams.event({"event": "env", "env": collect_env(project=spec.get("project"))})
    import torch  # noqa: F401  (after env: an import failure is then already on record)

    from mpsready.record.mps import FallbackCounter, TorchMPS
    from mpsready.record.observer import RecordingObserver
    from mpsready.record.randomness import RandomOpCounter
    from mpsready.record.transform import wrap_entry
    from mpsready.step.entry import EntryError, load_entry
    from mpsready.step.runner import StepRunner

    device = spec["device"]
    backend = mps_backend
    if device.split(":")[0] == "mps" and backend is None:
        backend = TorchMPS()
    reason = _unavailable(device, backend)
    if reason:
        streams.event({"event": "device_error", "message": reason})
        return 3
    seed = int(spec.get("seed", 0))
    how = seed_everything(seed)
    streams.event({"event": "seed", "seed": {"value": seed, "how": how}})
    from mpsready.childproc import enter_user_path

    # the machinery above is loaded; only now the user's PYTHONPATH (load_entry adds the entry's folder, or the
    # current folder for a module ENTRY, as python -m does)
    enter_user_path(None)
    try:
        entry = load_entry(spec["entry"], cwd=spec.get("cwd"))
    except EntryError as exc:
        streams.event({"event": "entry_error", "message": str(exc)})
        return 2
    except Exception as exc:  # importing the user's module raised: a failure of the build stage
        streams.event({"event": "done", "stages": _import_failed(exc), "fallback": None, "warnings": [],
                       "inputs": None})
        return 0
    entry = wrap_entry(entry, float64=bool(spec.get("float64")), synthetic=spec.get("synthetic"), seed=seed)
    counter = FallbackCounter(backend) if backend is not None else None
    runner = StepRunner(entry, device=device, steps=int(spec["steps"]))
    random_ops = RandomOpCounter()
    from mpsready.record.numerics_hook import NonFiniteSeen

    seen_bad = NonFiniteSeen(streams.tensor)  # the first recorded tensor holding NaN/Inf (its statistics)
    obs = RecordingObserver(seen_bad, streams.event, device, results=runner.results,
                            raw=streams.raw if spec.get("save_tensors") else None, counter=counter, mps=backend,
                            random_ops=random_ops)

    runner.observers = [obs]
    saver = None
    if spec.get("save_inputs"):
        from mpsready.record.numerics_hook import LayerInputSaver

        saver = LayerInputSaver(spec["save_inputs"], spec["out"])
        runner.observers.append(saver)
    results, caught, counts = _run_catching_warnings(runner)
    numerics: dict[str, Any] = {"nan_check": False}
    if spec.get("nan_check", True):
        from mpsready.record.numerics_hook import locate_nonfinite

        roots = [str(entry.root)] + ([str(spec["project"])] if spec.get("project") else [])
        numerics = locate_nonfinite(spec, seen_bad.first, roots, seed_everything)
    fallback = _fallback_summary(counter, backend, caught)
    streams.event({"event": "done", "stages": [r.to_dict() for r in results], "fallback": fallback,
                   "random_ops": random_ops.to_dict(),
                   # warning texts may quote the user's data: only counts by category, unless asked
                   "warnings": [m[:500] for m in caught[:50]] if spec.get("keep_output") else [],
                   "warning_counts": dict(sorted(counts.items())),
                   "inputs": {"structure": obs.input_structure, "tensors": obs.input_specs}
                   if obs.input_structure else None,
                   "numerics": numerics,
                   "layer_inputs": saver.to_dict() if saver is not None else None})
    return 0


def _run_catching_warnings(runner: Any) -> tuple[list[Any], list[str], dict[str, int]]:
    """``runner.run()`` with every warning caught: the stage results, the distinct warning texts in order and
    the count per warning category."""
    caught: list[str] = []
    counts: dict[str, int] = {}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        results = runner.run()
        for w in seen:
            counts[w.category.__name__] = counts.get(w.category.__name__, 0) + 1
            msg = str(w.message)
            if msg not in caught:
                caught.append(msg)
    return results, caught, counts

def _unavailable(device: str, backend: Any) -> str | None:
    """Why ``device`` cannot run here (the worker then reports ``device_error``), or ``None``."""
    import torch

    from mpsready.record.mps import unavailable_reason

    kind = device.split(":")[0]
    if kind == "mps":
        return unavailable_reason(backend)
    if kind == "cuda" and not torch.cuda.is_available():
        return "CUDA is not available here (torch.cuda.is_available() is False)"
    return None


def _fallback_summary(counter: Any, backend: Any, caught: list[str]) -> dict[str, Any]:
    """The record's ``fallback`` section: whether PYTORCH_ENABLE_MPS_FALLBACK was set, the per-call counts and
    the ops PyTorch's fallback warning named."""
    from mpsready.record.mps import parse_fallback_warning

    warned = sorted({op for op in (parse_fallback_warning(m) for m in caught) if op})
    return {
        "enabled": os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK", "").strip() not in ("", "0"),
        "checked": counter is not None,
        "backend": getattr(backend, "name", None),
        "method": ("per-call dispatch check (TorchDispatchMode + torch._C._dispatch_has_kernel_for_dispatch_key)"
                   if counter is not None else None),
        **(counter.to_dict() if counter is not None else {"calls": {}, "by_stage": {}}),
        "warned_ops": warned,
    }

def _import_failed(exc: Exception) -> list[dict[str, Any]]:
    """Stage results when importing the ENTRY's module raised (``build`` failed, the rest not run)."""
    import traceback

    from mpsready.step.contract import STAGES, StageResult, StageStatus

    build = StageResult("build", StageStatus.FAILED, error_type=type(exc).__name__,
                        error=f"importing the entry's module raised: {exc}", traceback=traceback.format_exc(),
                        steps_run=1)
    rest = [StageResult(s, StageStatus.NOT_RUN, reason="build failed") for s in STAGES[1:]]
    return [r.to_dict() for r in [build, *rest]]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m mpsready.record.worker SPEC.json", file=sys.stderr)
        return 2
    watch_parent()
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    return run(spec)


if __name__ == "__main__":
    raise SystemExit(main())

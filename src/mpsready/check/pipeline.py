"""``mpsready check``: run every stage this machine allows, in order, and collect the evidence.

Stages: scan (always), env (always), trace (an ENTRY is given and PyTorch is installed; on the emulated
MPS device of :mod:`mpsready.emulate` unless this machine has a real one or ``trace_device="cpu"`` asks for
the CPU trace), record
(on each device present: the CPU always, CUDA when ``torch.cuda.is_available()``, MPS only when
``torch.backends.mps.is_available()`` says so: nothing here claims an MPS run that did not
happen), compare (a baseline record is given). Each stage's output is written to ``out`` as
the stage's own JSON (or run record), so ``mpsready report`` can rebuild the report later.

A stage that cannot run is *skipped with its reason*; one that fails is recorded as failed
with the error. Neither stops the stages after it, and neither reads as a passed check.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mpsready.errors import UsageError
from mpsready.report.evidence import Evidence
from mpsready.step.entry import EntryError
from mpsready.report.evidence import compare as compare_adapter
from mpsready.report.evidence import env as env_adapter
from mpsready.report.evidence import record as record_adapter
from mpsready.report.evidence import scan as scan_adapter
from mpsready.report.evidence import trace as trace_adapter

STAGES = ("scan", "env", "trace", "record", "compare")


@dataclass
class StageRun:
    name: str
    status: str = "pending"  # done | skipped | failed
    detail: str = ""
    outputs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""  # the traceback of a failed stage (or of the step's first failed stage, for the trace)


Progress = Callable[[StageRun], None]


def _doc_of(result: Any) -> dict[str, Any]:
    """A stage result as its JSON document (``to_dict()``, or already a dict)."""
    if isinstance(result, dict):
        return result
    for name in ("to_dict", "to_document", "as_dict"):
        fn = getattr(result, name, None)
        if callable(fn):
            return fn()
    raise TypeError(f"cannot turn {type(result).__name__} into a JSON document")


def _dump(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=1, allow_nan=False, default=str) + "\n", encoding="utf-8")


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@contextlib.contextmanager
def _quiet_env(**overrides: str):
    old = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _project_module_names(project: Path) -> set[str]:
    """Top-level module names the project directory provides (``tinyformer`` for ``tinyformer/``)."""
    names = set()
    for p in project.iterdir():
        if p.suffix == ".py":
            names.add(p.stem)
        elif p.is_dir() and (p / "__init__.py").exists():
            names.add(p.name)
    return names


def _purge(names: set[str], keep_under: Path | None) -> None:
    """Drop ``names`` (and their submodules) from ``sys.modules``, unless loaded from under ``keep_under``."""
    import sys

    for mod_name, mod in list(sys.modules.items()):
        top = mod_name.split(".")[0]
        if top not in names and not top.startswith("_mpsready_entry_"):
            continue
        file = getattr(mod, "__file__", None) or ""
        if keep_under is not None and file and Path(file).resolve().is_relative_to(keep_under):
            continue
        del sys.modules[mod_name]


@contextlib.contextmanager
def _project_imports(project: Path):
    """The trace imports the user's code into this process: make sure it is *this* project's copy.

    Modules of the same names imported earlier from elsewhere (another checkout, an earlier
    ``check`` in the same process) are dropped first, and the project's own modules after, so
    nothing stale is traced and nothing leaks into the next run.
    """
    names = _project_module_names(project)
    _purge(names, keep_under=project)
    try:
        yield
    finally:
        _purge(names, keep_under=None)


def devices_present() -> list[str]:
    """``cpu`` always; ``cuda`` and ``mps`` only when PyTorch says they are available here."""
    found = ["cpu"]
    if not _has_module("torch"):
        return found
    import torch

    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return found


class ProjectConfigError(UsageError):
    """The project's own input makes the scan refuse to run (an unknown rule code in [tool.mpsready])."""


class CheckPipeline:
    """Runs the stages for ``project`` into ``out``; :meth:`run` returns the evidence."""

    def __init__(self, project: str | os.PathLike[str], out: str | os.PathLike[str], entry: str | None = None,
                 baseline: str | os.PathLike[str] | None = None, steps: int = 6,
                 devices: list[str] | None = None, progress: Progress | None = None, torch: str | None = None,
                 macos: str | None = None, skip_record: bool = False, trace_device: str = "mps"):
        self.project = Path(project).resolve()
        self.out = Path(out).resolve()
        self.entry = entry
        self.baseline = Path(baseline).resolve() if baseline else None
        self.steps = steps
        self.devices = devices
        self.torch, self.macos = torch, macos
        self.skip_record, self.trace_device = skip_record, trace_device
        self.progress = progress or (lambda s: None)
        self.runs: dict[str, StageRun] = {n: StageRun(n) for n in STAGES}
        self.evidence = Evidence()
        self.record_dirs: dict[str, Path] = {}

    # -- plumbing ---------------------------------------------------------------------------
    def _stage(self, name: str, fn: Callable[[StageRun], None]) -> None:
        run = self.runs[name]
        run.status, run.detail = "running", ""
        self.progress(run)
        t0 = time.perf_counter()
        try:
            fn(run)
            if run.status == "running":
                run.status = "done"
        except _Skip as exc:
            run.status, run.detail = "skipped", str(exc)
            self.evidence.skipped[name] = str(exc)
        except (EntryError, ProjectConfigError):
            # A bad ENTRY or an unknown rule code in [tool.mpsready] is the user's usage error, not
            # evidence: stop (exit 2); the outputs already written (scan.json, env.json) stay.
            run.status = "failed"
            self.progress(run)
            raise
        except Exception as exc:  # a stage's failure is evidence, not a crash of check
            run.status = "failed"
            run.detail = f"{type(exc).__name__}: {exc}"
            self.evidence.skipped[name] = f"failed: {run.detail}"
            run.error = traceback.format_exc()
            (self.out / f"{name}.error.txt").write_text(run.error, encoding="utf-8")
        run.seconds = time.perf_counter() - t0
        self.progress(run)

    def run(self) -> Evidence:
        self.out.mkdir(parents=True, exist_ok=True)
        self._stage("scan", self._scan)
        self._stage("env", self._env)
        self._stage("trace", self._trace)
        self._stage("record", self._record)
        self._stage("compare", self._compare)
        return self.evidence

    # -- stages -----------------------------------------------------------------------------
    def _scan(self, run: StageRun) -> None:
        try:
            from mpsready.scan import scan_path
        except ImportError:
            raise _Skip("the scan stage is not installed in this mpsready") from None
        try:
            result = scan_path(self.project)  # the project's [tool.mpsready] config applies
        except UsageError as exc:  # e.g. `ignore = ["API10"]`: a gate that names no rule fails closed
            raise ProjectConfigError(str(exc)) from None
        try:
            from mpsready.scan.formats.json import to_document

            doc = to_document(result)
        except ImportError:
            doc = _doc_of(result)
        path = self.out / "scan.json"
        _dump(path, doc)
        self.evidence.scan = scan_adapter.from_doc(doc, str(path))
        n = len(self.evidence.scan.findings)
        run.detail = f"{n} finding(s), outlook {self.evidence.scan.outlook.value if self.evidence.scan.outlook else '?'}"
        run.outputs.append(str(path))

    def _env(self, run: StageRun) -> None:
        try:
            from mpsready.env import collect_env
        except ImportError:
            raise _Skip("the env stage is not installed in this mpsready") from None
        doc = collect_env(project=self.project)
        path = self.out / "env.json"
        _dump(path, doc)
        self.evidence.env = env_adapter.from_doc(doc, str(path))
        run.detail = self.evidence.env.describe()
        run.outputs.append(str(path))


    def _need_step(self) -> None:
        """trace and record run the representative step: they need an ENTRY and PyTorch (else ``_Skip``)."""
        if not self.entry:
            raise _Skip("no --entry given (the representative step)")
        if not _has_module("torch"):
            raise _Skip("PyTorch is not installed here")

    def _trace(self, run: StageRun) -> None:
        self._need_step()
        try:
            from mpsready.trace import trace_entry
        except ImportError:
            raise _Skip("the trace stage is not installed in this mpsready") from None
        from mpsready.trace.predict import DEFAULT_MACOS

        with _project_imports(self.project):
            result = trace_entry(self.entry, cwd=str(self.project), torch=self.torch,
                                 macos=self.macos or DEFAULT_MACOS, device=self.trace_device)
        doc = _doc_of(result)
        path = self.out / "trace.json"
        _dump(path, doc)
        self.evidence.trace = trace_adapter.from_doc(doc, str(path))
        t = self.evidence.trace
        run.detail = (f"{len(t.ops)} operators on {t.traced_on or '?'}: {len(t.by_status('error'))} predicted "
                      f"errors, {len(t.by_status('fallback'))} fallbacks")
        # a blocker that is no operator's error (a float64 tensor moved to MPS: DTY201) failed the step too; the
        # line said "0 predicted errors" over it
        blockers = sorted({f.code for f in t.findings if f.severity.value == "blocker"})
        if blockers:
            n = sum(1 for f in t.findings if f.severity.value == "blocker")
            run.detail += f", {n} blocker finding(s) ({', '.join(blockers)})"
        failed = [s for s in result.trace.stages if s.get("status") == "failed"]
        if failed:  # the user's step failed while traced: show its exception, not only a count
            st = failed[0]
            run.detail += f"; stage {st.get('stage')} failed: {st.get('error_type')}: {str(st.get('error'))[:200]}"
            run.error = str(st.get("traceback") or "")
        run.outputs.append(str(path))

    def _record(self, run: StageRun) -> None:
        if self.skip_record:
            raise _Skip("--skip-record given")
        self._need_step()
        try:
            from mpsready.record import record_entry
        except ImportError:
            raise _Skip("the record stage is not installed in this mpsready") from None
        devices = self.devices or devices_present()
        done = []
        (self.out / "records").mkdir(exist_ok=True)  # record_entry creates only the last level (h40c)
        for dev in devices:
            target = self.out / "records" / dev.replace(":", "-")
            record_entry(self.entry, device=dev, steps=self.steps, out=target, cwd=str(self.project),
                         project=str(self.project), force=True)
            rec = record_adapter.load(target)
            self.evidence.records.append(rec)
            self.record_dirs[rec.backend] = target
            state = "all stages passed" if rec.all_passed else f"failed in {', '.join(rec.failed_stages)}"
            done.append(f"{dev}: {state}")
            run.outputs.append(str(target))
        run.detail = "; ".join(done)

    def _compare(self, run: StageRun) -> None:
        if self.baseline is None:
            raise _Skip("no --baseline record given (for example one recorded on the CUDA server)")
        if not self.record_dirs:
            raise _Skip("no run record was made here to compare with the baseline")
        try:
            from mpsready.compare import compare_records
        except ImportError:
            raise _Skip("the compare stage is not installed in this mpsready") from None
        candidate = next(self.record_dirs[b] for b in ("mps", "cuda", "cpu") if b in self.record_dirs)
        comp = compare_records(self.baseline, candidate)
        try:
            from mpsready.compare.formats.json_doc import to_document

            doc = to_document(comp, 0 if comp.ok else 1)
        except ImportError:
            doc = _doc_of(comp)
        path = self.out / "compare.json"
        _dump(path, doc)
        plots: dict[str, str] = {}
        with contextlib.suppress(ImportError):
            from mpsready.compare.formats.plots import write_plots

            plots = write_plots(comp, self.out / "compare-plots")
        ev = compare_adapter.from_doc(doc, str(path))
        ev.plots.update(plots)
        self.evidence.compare = ev
        run.detail = f"{ev.devices()}: {ev.failed if ev.failed is not None else '?'} tensor(s) out of tolerance"
        run.outputs.append(str(path))


class _Skip(Exception):
    """A stage this machine or these arguments do not allow; the message says why."""

"""Adapter for a results archive of ``mpsready kit`` (``results.tar.gz`` of ``run-on-mac.sh``): what a borrowed
Mac (or a CUDA server) observed, unpacked safely by :func:`mpsready.kit.archive.extract`.

The archive holds an env record, two run records (the kit's device and the CPU), a comparison of them, a trace
on the device, the project's tests as observed (:mod:`mpsready.kit.observe`), each step's exit status (installs
among them) and the kit check (:mod:`mpsready.kit.manifest`: which manifest ran, which sign-off). Everything in
it is **observed** on the machine it names; a dry run (``MPSREADY_KIT_DEVICE=cpu``) observed the CPU only, and
:attr:`MacEvidence.on_mac` is false for it. A part that is missing or unreadable is unknown and listed in
:attr:`MacEvidence.unreadable`, never read as a good result.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsready import safeio
from mpsready.kit.archive import ArchiveError, extract
from mpsready.report.evidence import compare as compare_ev
from mpsready.report.evidence import env as env_ev
from mpsready.report.evidence import record as record_ev
from mpsready.report.evidence import trace as trace_ev
from mpsready.report.evidence._util import EvidenceError

RESULTS_SCHEMA = "mpsready.kit.results"
INSTALL_PREFIX = "install "


@dataclass(frozen=True)
class Step:
    name: str
    exit: int | None
    timed_out: bool
    skipped: str | None
    error: str | None

    @property
    def ok(self) -> bool | None:
        return None if self.skipped else (self.exit == 0 and not self.timed_out)

    def state(self) -> str:
        if self.skipped:
            return f"skipped ({self.skipped})"
        if self.timed_out:
            return "timed out"
        return self.error or ("ok" if self.exit == 0 else f"exit {self.exit}")


@dataclass(frozen=True)
class ObservedTest:
    nodeid: str
    outcome: str
    exception: str | None = None
    message: str | None = None
    mps_kind: str | None = None  # op_not_implemented | float64_refused
    op: str | None = None
    markers: tuple[str, ...] = ()  # mpsready markers seen on the Mac (mps_mac, mps_not_mac)


@dataclass
class MacEvidence:
    source: str
    device: str | None  # the device the steps ran on (mps; cpu on a dry run)
    kit_device: str | None  # the device the kit was built for
    dry_run: bool
    machine: str | None
    steps: list[Step] = field(default_factory=list)
    env: env_ev.EnvEvidence | None = None
    records: list[record_ev.RecordEvidence] = field(default_factory=list)
    compare: compare_ev.CompareEvidence | None = None
    trace: trace_ev.TraceEvidence | None = None
    tests: list[ObservedTest] = field(default_factory=list)
    test_fallbacks: dict[str, str] = field(default_factory=dict)  # op -> first test that warned
    kit: dict[str, Any] | None = None  # the manifest of the kit that ran
    kit_check: dict[str, Any] | None = None  # kit-check.json: manifest hash, approval, changed files
    unreadable: list[str] = field(default_factory=list)
    ran: bool = True  # False for a kit folder given with report --kit: nothing has run yet

    @property
    def on_mac(self) -> bool:
        """Observed on a Mac's MPS device: the steps ran on ``mps`` and the env record says macOS."""
        return self.device == "mps" and not self.dry_run and self.env is not None and self.env.is_mac

    @property
    def where(self) -> str:
        """``Mac mini (macOS 14.4.1, torch 2.5.1)``: the machine, as the facts learned from it are labelled."""
        e = self.env
        bits = [f"macOS {e.macos}" if e and e.macos else (e.system if e else None),
                f"torch {e.torch}" if e and e.torch else None]
        return f"{self.machine or 'an unnamed machine'} ({', '.join(b for b in bits if b) or 'unknown system'})"

    def installs(self) -> list[Step]:
        return [s for s in self.steps if s.name.startswith(INSTALL_PREFIX) or s.name == "install"]

    def device_record(self) -> record_ev.RecordEvidence | None:
        return next((r for r in self.records if r.source.endswith("record-device")), None)


def _json(root: Path, name: str, out: MacEvidence) -> Any:
    path = root / name
    if not path.exists():
        return None
    try:
        return safeio.loads(safeio.read_text(path))
    except (OSError, ValueError, RecursionError):
        out.unreadable.append(name)
        return None


def load(archive: str | os.PathLike[str]) -> MacEvidence:
    """Read ``archive``; raises :class:`EvidenceError` when it is not a readable results archive."""
    if not Path(archive).is_file():
        raise EvidenceError(f"--mac-results: {archive} is not a file")
    with tempfile.TemporaryDirectory(prefix="mpsready-mac-") as tmp:
        try:
            root = extract(archive, tmp).root
        except ArchiveError as exc:
            raise EvidenceError(f"--mac-results: {exc}") from None
        return _read(root, str(archive))


def _read(root: Path, source: str) -> MacEvidence:
    run = safe_dict(_json(root, "run.json", MacEvidence(source, None, None, False, None)))
    if (run.get("schema") or {}).get("name") != RESULTS_SCHEMA:
        raise EvidenceError(f"--mac-results: {source} has no results/run.json of schema {RESULTS_SCHEMA}")
    out = MacEvidence(source, run.get("device"), run.get("kit_device"), bool(run.get("dry_run")), run.get("machine"))
    for s in run.get("steps") or []:
        if isinstance(s, dict) and isinstance(s.get("name"), str):
            out.steps.append(Step(s["name"], s.get("exit") if isinstance(s.get("exit"), int) else None,
                                  bool(s.get("timed_out")), s.get("skipped"), s.get("error")))
    out.kit = _json(root, "manifest.json", out)
    out.kit_check = _json(root, "kit-check.json", out)
    _stage_outputs(root, source, out)
    tests = safe_dict(_json(root, "tests.json", out))
    for t in tests.get("tests") or []:
        if isinstance(t, dict) and isinstance(t.get("nodeid"), str):
            marks = t["markers"] if isinstance(t.get("markers"), list) else []
            out.tests.append(ObservedTest(t["nodeid"], str(t.get("outcome")), t.get("exception"), t.get("message"),
                                          t.get("mps_kind"), t.get("op"),
                                          tuple(m for m in marks if isinstance(m, str))))
    out.test_fallbacks = {f["op"]: str(f.get("first_test")) for f in tests.get("fallbacks") or []
                          if isinstance(f, dict) and isinstance(f.get("op"), str)}
    return out


def _stage_outputs(root: Path, source: str, out: MacEvidence) -> None:
    # the comparison with the kit's CUDA reference (same synthetic inputs) before the Mac's own CPU-vs-device one
    compare = "compare-reference.json" if (root / "compare-reference.json").is_file() else "compare.json"
    for name, loader, attr in (("env.json", env_ev.load, "env"), (compare, compare_ev.load, "compare"),
                               ("trace-device.json", trace_ev.load, "trace")):
        if (root / name).is_file():
            try:
                setattr(out, attr, loader(root / name))
                getattr(out, attr).source = f"{source}:results/{name}"
            except EvidenceError:
                out.unreadable.append(name)
    for name in ("record-device", "record-cpu"):
        if (root / name).is_dir():
            try:
                rec = record_ev.load(root / name)
            except EvidenceError:
                out.unreadable.append(name)
                continue
            rec.source = f"{source}:results/{name}"
            out.records.append(rec)


def load_kit(kit: str | os.PathLike[str]) -> MacEvidence:
    """A kit folder not yet run (``report --kit DIR``): its manifest and whether it matches it and is signed off,
    for item 8's "what would leave the lab". Raises :class:`EvidenceError` when ``kit`` holds no manifest."""
    from mpsready.kit.manifest import MANIFEST_JSON, check, read_json

    state = check(str(kit))
    doc = read_json(os.path.join(kit, MANIFEST_JSON))
    if state.manifest_sha256 is None or doc is None:
        raise EvidenceError(f"--kit: {kit} holds no readable {MANIFEST_JSON}: not a kit of mpsready kit")
    return MacEvidence(str(kit), None, doc.get("device"), False, None, kit=doc, kit_check=state.to_dict(), ran=False)


def safe_dict(doc: Any) -> dict[str, Any]:
    return doc if isinstance(doc, dict) else {}


@dataclass(frozen=True)
class ObservedOp:
    """What the device did with one operator: ``error`` (PyTorch's "not currently implemented for the MPS device"
    text named it), ``fallback`` (counted by the record, or named by PyTorch's fallback warning) or ``runs``
    (dispatched on the device in the trace, with neither of the above). ``how``: the evidence, in words."""

    op: str
    status: str
    how: str


def observed_ops(mac: MacEvidence) -> dict[str, ObservedOp]:
    """Every operator the device was seen to fail, fall back or run, from the device record, the tests and the
    trace on the device. Empty unless the results come from a Mac (:attr:`MacEvidence.on_mac`)."""
    from mpsready.record.mps import classify_error

    if not mac.on_mac:
        return {}
    out: dict[str, ObservedOp] = {}
    rec = mac.device_record()
    if rec is not None:
        for stage, st in rec.stages.items():
            kind, op = classify_error(st.get("error"))
            if kind == "op_not_implemented" and op:
                out[op] = ObservedOp(op, "error", f"the step's {stage} stage raised NotImplementedError on mps")
        for op, n in rec.fallback_ops.items():
            out.setdefault(op, ObservedOp(op, "fallback", f"{n} call(s) ran on the CPU in the step" if n else
                                          "named by PyTorch's CPU-fallback warning in the step"))
    for t in mac.tests:
        if t.mps_kind == "op_not_implemented" and t.op:
            out.setdefault(t.op, ObservedOp(t.op, "error", f"test {t.nodeid} raised NotImplementedError on mps"))
    for op, test in mac.test_fallbacks.items():
        out.setdefault(op, ObservedOp(op, "fallback", f"PyTorch's CPU-fallback warning in test {test}"))
    if mac.trace is not None:
        for o in mac.trace.ops:
            out.setdefault(o.op, ObservedOp(o.op, "runs", "dispatched on mps in the traced step"))
    return out


def float64_refused(mac: MacEvidence) -> str | None:
    """Where the Mac refused float64 (the step or a test), else ``None``."""
    from mpsready.record.mps import classify_error

    if not mac.on_mac:
        return None
    rec = mac.device_record()
    for stage, st in (rec.stages.items() if rec else ()):
        if classify_error(st.get("error"))[0] == "float64_refused":
            return f"the step's {stage} stage"
    return next((f"test {t.nodeid}" for t in mac.tests if t.mps_kind == "float64_refused"), None)

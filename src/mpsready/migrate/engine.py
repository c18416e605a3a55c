"""``migrate_path``: scan a project, run the transforms file by file, collect edits and manual entries.

The scan (:func:`mpsready.scan.engine.scan_path`) says where each finding is; the transforms find the
node there with libcst. Nothing is written here: :mod:`mpsready.migrate.apply` writes a plan.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mpsready import rules as registry
from mpsready.findings import Finding
from mpsready.migrate.fixability import bucket, declared_floor
from mpsready.migrate.leftovers import find_leftovers
from mpsready.migrate.planfile import FILE_TIME_LIMIT_S, FileJob, outcomes as _outcomes
from mpsready.migrate.progress import PlanProgress
from mpsready.migrate.transforms import all_transforms
from mpsready.scan.config import ScanConfig
from mpsready.scan.engine import ScanResult, scan_path
from mpsready.scan.walker import walk

@dataclass(frozen=True)
class EditRecord:
    """One edit as reported: rule code, 1-based line (the notebook cell's line for notebooks), what changed;
    ``review``: how it changes what a Mac runs (precision, device) where the original already ran there."""

    code: str
    line: int
    what: str
    cell: int | None = None
    review: str | None = None
    needs_torch: str | None = None

    def to_dict(self) -> dict:
        d = {"code": self.code, "line": self.line, "what": self.what}
        if self.cell is not None:
            d["cell"] = self.cell
        if self.review is not None:
            d["changes_mac_path"] = self.review
            d["needs_torch"] = self.needs_torch
        return d


@dataclass
class FilePlan:
    """One file: its text before and after, the sha256 of the bytes read (checked again before writing)."""

    path: str  # relative to the root, POSIX
    abspath: str
    before: str
    after: str
    sha256: str
    edits: list[EditRecord] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class ManualRecord:
    code: str
    path: str | None
    line: int | None
    reason: str

    def to_dict(self) -> dict:
        return {"code": self.code, "path": self.path, "line": self.line, "reason": self.reason}


@dataclass(frozen=True)
class FindingRef:
    """A scan finding an edit of the plan fixes: its rule code, path and line."""

    code: str
    path: str | None
    line: int | None

    def to_dict(self) -> dict:
        return {"code": self.code, "path": self.path, "line": self.line}


@dataclass
class Plan:
    """Everything ``migrate`` would do. ``files`` holds changed files only; ``manual`` every code finding the
    tool leaves to a person; ``fixed`` every scan finding an edit fixes (edits the transforms found themselves,
    such as ``torch.load`` without ``map_location``, fix no scan finding); ``kept`` findings left as they are on
    purpose (harmless on a Mac or already
    behind a CUDA check); ``errors`` files that could not be parsed or read (left untouched); ``leftovers``
    temp files an earlier ``--apply`` left when it was killed (:mod:`mpsready.migrate.leftovers`)."""

    root: str
    files: list[FilePlan] = field(default_factory=list)
    manual: list[ManualRecord] = field(default_factory=list)
    fixed: list[FindingRef] = field(default_factory=list)
    kept: list[ManualRecord] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    torch_floor: tuple[int, int] | None = None
    findings_before: int = 0
    leftovers: list[str] = field(default_factory=list)  # temp files of an earlier, killed --apply (relative)

    @property
    def edits(self) -> int:
        return sum(len(f.edits) for f in self.files)


def torch_floor(scan: ScanResult) -> tuple[int, int] | None:
    """The lowest (major, minor) PyTorch the project's declarations allow; ``None`` without a lower bound."""
    return declared_floor(scan.dependencies)


def _selected(codes: list[str], select: tuple[str, ...], ignore: tuple[str, ...]) -> set[str]:
    chosen = set(registry.select(codes, list(select))) if select else set(codes)
    return chosen - set(registry.select(codes, list(ignore)))


def migrate_path(path: str | os.PathLike[str], *, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                 config: ScanConfig | None = None, progress: PlanProgress | None = None,
                 file_time_limit: float = FILE_TIME_LIMIT_S) -> Plan:
    """Plan the migration of the project (or single file) at ``path``; writes nothing.

    ``progress`` (:mod:`mpsready.migrate.progress`) hears the scan's and the plan's ``(done, total)``.
    ``config.jobs`` > 1 plans the files in a process pool when there are many (as the scan analyses them);
    the plan is the same. A file above ``config.max_file_size`` bytes, or whose planning passes
    ``file_time_limit`` seconds (checked between the steps of its planning: see :mod:`mpsready.migrate.planfile`),
    is listed in ``Plan.errors`` and its findings as manual, with the reason.

    ``select``/``ignore`` are rule codes or prefixes. Raises :class:`~mpsready.errors.UsageError` for a
    missing path. A file libcst cannot parse is listed in ``Plan.errors`` and left untouched.
    """
    target = Path(path)
    scan = scan_path(target, config or ScanConfig(), progress=progress.scan if progress else None)
    root = target if target.is_dir() else target.parent
    transforms = all_transforms()
    codes = sorted({c for t in transforms for c in t.codes} | {f.code for f in scan.findings})
    chosen = _selected(codes, select, ignore)
    transforms = [t for t in transforms if set(t.codes) & chosen]
    plan = Plan(str(root), torch_floor=torch_floor(scan))
    by_path: dict[str, list[Finding]] = {}
    for f in scan.findings:
        if f.location.path and f.code in chosen:
            by_path.setdefault(f.location.path, []).append(f)
    plan.findings_before = sum(len(v) for v in by_path.values())
    # where the project selects its device itself: code that cannot see it makes no choice of its own
    selections = tuple(f"{f.location.path}:{f.location.line}" for f in scan.findings
                       if f.code == "API104" and f.location.path)
    if target.is_dir():
        cfg = scan.config
        files = [(pf.relpath, pf.abspath) for pf in walk(root, exclude=cfg.exclude, max_file_size=cfg.max_file_size).files
                 if pf.python or pf.notebook]
    else:
        files = [(target.name, str(target))]
    limit = scan.config.max_file_size
    plan.leftovers = find_leftovers(root, [abspath for _, abspath in files])
    handled: set[int] = set()
    unparsed: set[str] = set()  # files listed in plan.errors: their findings are left as they are, for that reason
    jobs = [FileJob(rel, abspath, by_path.get(rel, []), tuple(sorted(chosen)), plan.torch_floor, selections, limit,
                    file_time_limit) for rel, abspath in files]
    for index, (job, out) in enumerate(zip(jobs, _outcomes(jobs, scan.config.jobs))):
        if progress:
            progress.plan(index, len(files))
        if out is None:
            continue  # nothing a transform would change: the findings are reported as kept below
        if out.error is not None:
            plan.errors.append(out.error)
            unparsed.add(job.rel)
            continue
        handled |= {id(job.findings[i]) for i in out.handled}
        plan.fixed += [FindingRef(f.code, f.location.path, f.location.line) for f in (job.findings[i] for i in out.fixed)]
        plan.manual += out.manual
        plan.kept += out.kept
        if out.file is not None:
            plan.files.append(out.file)
    if progress:
        progress.plan(len(files), len(files))
    for f in scan.findings:
        if f.code not in chosen or id(f) in handled or not f.location.path:
            continue
        kind, reason = bucket(f, plan.torch_floor)
        if kind == "other":
            continue
        if f.location.path in unparsed and kind != "kept":
            kind, reason = "manual", "left as it is: the file was not parsed (see 'not parsed')"
        record = ManualRecord(f.code, f.location.path, f.location.line, reason)
        (plan.kept if kind == "kept" else plan.manual).append(record)
    plan.fixed.sort(key=lambda r: (r.path or "", r.line or 0, r.code))
    plan.manual.sort(key=lambda m: (m.path or "", m.line or 0, m.code))
    plan.kept.sort(key=lambda m: (m.path or "", m.line or 0, m.code))
    return plan


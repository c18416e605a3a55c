"""``migrate_path``: scan a project, run the transforms file by file, collect edits and manual entries.

The scan (:func:`mpsready.scan.engine.scan_path`) says where each finding is; the transforms find the
node there with libcst. Nothing is written here: :mod:`mpsready.migrate.apply` writes a plan.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from mpsready import rules as registry
from mpsready.findings import Finding
from mpsready.migrate.fixability import bucket, declared_floor
from mpsready.migrate.interface import MigrateError, Transform
from mpsready.migrate.leftovers import find_leftovers
from mpsready.migrate.notebook import migrate_notebook
from mpsready.migrate.progress import PlanProgress
from mpsready.migrate.source import migrate_source
from mpsready.migrate.transforms import all_transforms
from mpsready.scan.config import ScanConfig
from mpsready.scan.engine import ScanResult, scan_path
from mpsready.scan.walker import walk

BOM = "\ufeff"


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
    such as ``torch.load`` without ``map_location``, fix no scan finding); ``kept`` findings left as they are on purpose (harmless on a Mac or already
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
                 config: ScanConfig | None = None, progress: PlanProgress | None = None) -> Plan:
    """Plan the migration of the project (or single file) at ``path``; writes nothing.

    ``progress`` (:mod:`mpsready.migrate.progress`) hears the scan's and the plan's ``(done, total)``.

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
    for index, (rel, abspath) in enumerate(files):
        if progress:
            progress.plan(index, len(files))
        findings = by_path.get(rel, [])
        if all(bucket(f, plan.torch_floor)[0] == "kept" for f in findings) and not _worth_detecting(abspath, transforms):
            continue  # nothing a transform would change: the findings are reported as kept below
        try:
            with open(abspath, "rb") as fh:
                data = fh.read(limit + 1)  # the scan's limit, in single-file mode too (a 55 MB file took 5 GB)
            if len(data) > limit:
                plan.errors.append(f"{rel}: above the {limit}-byte limit (--max-file-size); not read")
                unparsed.add(rel)
                continue
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            plan.errors.append(f"{rel}: not read ({exc})")
            unparsed.add(rel)
            continue
        fp = FilePlan(rel, abspath, text, text, hashlib.sha256(data).hexdigest())
        bom = BOM if text.startswith(BOM) else ""  # libcst drops it and json refuses it: set aside, put back
        text = text[len(bom):]
        try:
            if rel.endswith(".ipynb"):
                after, edits, manual, done, fixed = migrate_notebook(text, rel, findings, transforms, plan.torch_floor,
                                                                      selections=selections)
                handled |= {id(f) for f in done}
                plan.fixed += [FindingRef(f.code, f.location.path, f.location.line) for f in fixed]
            else:
                res = migrate_source(text, rel, findings, transforms, torch_floor=plan.torch_floor,
                                     selections=selections)
                after, manual = res.text, res.manual
                edits = [EditRecord(e.code, e.line, e.what, review=e.review, needs_torch=e.needs_torch) for e in res.edits]
                fixed = [f for e in res.edits for f in e.resolves()]
                handled |= {id(f) for f in fixed}
                plan.fixed += [FindingRef(f.code, f.location.path, f.location.line) for f in fixed]
        except MigrateError as exc:
            plan.errors.append(str(exc))
            unparsed.add(rel)
            continue
        for m in manual:
            if m.finding is not None:
                handled.add(id(m.finding))
            (plan.kept if m.kept else plan.manual).append(ManualRecord(m.code, rel, m.line, m.reason))
        fp.after, fp.edits = bom + after, edits
        if fp.changed:
            plan.files.append(fp)
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


def _worth_detecting(abspath: str, transforms: list[Transform]) -> bool:
    """Files without findings are parsed only when a word a self-detecting transform needs appears in them
    (a cheap prefilter, as the scan's triggers: the transform then decides on the syntax tree)."""
    if not any(t.detects for t in transforms):
        return False
    try:
        text = Path(abspath).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(t.wants(text) for t in transforms)

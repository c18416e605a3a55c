"""``migrate_path``: scan a project, run the transforms file by file, collect edits and manual entries.

The scan (:func:`mpsready.scan.engine.scan_path`) says where each finding is; the transforms find the
node there with libcst. Nothing is written here: :mod:`mpsready.migrate.apply` writes a plan.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from mpsready import rules as registry
from mpsready.findings import Finding
from mpsready.migrate.fixability import cell_of, bucket, declared_floor
from mpsready.migrate.leftovers import find_leftovers
from mpsready.migrate.planfile import FILE_TIME_LIMIT_S, FileJob, FileOutcome, outcomes as _outcomes
from mpsready.migrate.progress import PlanProgress
from mpsready.migrate.programs import followed, imports_of
from mpsready.migrate.selections import blocking, finding_place, for_file, mps_selections, path_of
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
    # the scan findings this entry stands for: two of a rule on one line are one entry (``_one_per_line``) but two
    # findings, and the effort counts findings (the plan said "5 manual" where the scan's estimate said 6)
    count: int = 1

    def to_dict(self) -> dict:
        """A notebook's entry also carries ``cell`` (the cell its reason names; ``line`` is the line in that cell),
        as edits and fixed findings do, so a JSON reader need not parse the reason (h40)."""
        d = {"code": self.code, "path": self.path, "line": self.line, "reason": self.reason, "count": self.count}
        cell = cell_of(self)
        if cell is not None:
            d["cell"] = cell
        return d


@dataclass(frozen=True)
class FindingRef:
    """A scan finding an edit of the plan fixes: its rule code, path and line (a notebook's: the line in the
    notebook's JSON, with ``cell`` and ``cell_line``, the line in that cell, as manual entries name it)."""

    code: str
    path: str | None
    line: int | None
    cell: int | None = None
    cell_line: int | None = None

    def to_dict(self) -> dict:
        d = {"code": self.code, "path": self.path, "line": self.line}
        if self.cell is not None:
            d |= {"cell": self.cell, "cell_line": self.cell_line}
        return d


def _record(f: Finding, reason: str) -> ManualRecord:
    """A finding no transform answered, as a manual or kept record; a notebook's names its cell and the line in it
    (``cell 77: ...`` at line 2), as the transforms' notebook records do (it named the notebook's JSON line 776:
    pytorch-Deep-Learning's ``.double()``)."""
    ev = f.evidence or {}
    cell, cell_line = ev.get("cell"), ev.get("cell_line")
    if (f.location.path or "").endswith(".ipynb") and isinstance(cell, int) and isinstance(cell_line, int):
        return ManualRecord(f.code, f.location.path, cell_line, f"cell {cell}: {reason}")
    return ManualRecord(f.code, f.location.path, f.location.line, reason)


def finding_ref(f: Finding) -> FindingRef:
    ev = f.evidence or {}
    cell, cell_line = ev.get("cell"), ev.get("cell_line")
    if (f.location.path or "").endswith(".ipynb") and isinstance(cell, int) and isinstance(cell_line, int):
        return FindingRef(f.code, f.location.path, f.location.line, cell, cell_line)
    return FindingRef(f.code, f.location.path, f.location.line)


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
    rounds: int = 1  # plan-and-apply rounds (in memory) until one changed nothing: see migrate_path

    @property
    def edits(self) -> int:
        return sum(len(f.edits) for f in self.files)


def torch_floor(scan: ScanResult) -> tuple[int, int] | None:
    """The lowest (major, minor) PyTorch the project's declarations allow; ``None`` without a lower bound."""
    return declared_floor(scan.dependencies)


def _selected(codes: list[str], select: tuple[str, ...], ignore: tuple[str, ...]) -> set[str]:
    chosen = set(registry.select(codes, list(select))) if select else set(codes)
    return chosen - set(registry.select(codes, list(ignore)))


MAX_ROUNDS = 4  # plan, apply in memory, plan again: real trees settle in two (the second changes nothing)


def migrate_path(path: str | os.PathLike[str], *, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                 config: ScanConfig | None = None, progress: PlanProgress | None = None,
                 file_time_limit: float = FILE_TIME_LIMIT_S) -> Plan:
    """Plan the migration of the project (or single file) at ``path``; writes nothing.

    The plan is a fixed point: after planning, the edits are applied in memory and the result is scanned and
    planned again, until a round changes nothing (at most :data:`MAX_ROUNDS` rounds). The plan returned is the
    sum: each file's text before the first round and after the last, every round's edits and fixed findings,
    and the manual and kept entries of the last round (what is left once the plan is written). A later round's
    lines are mapped back to the lines of the file as it is on disk. The places where the project selects its
    device only grow from round to round (:mod:`mpsready.migrate.selections`), so a move an earlier round
    refused for mixing is never made with an independent choice in a later one. So a second ``--apply`` changes
    nothing.

    ``progress`` (:mod:`mpsready.migrate.progress`) hears the scan's and the plan's ``(done, total)`` of the first
    round. ``config.jobs`` > 1 plans the files in a process pool when there are many (as the scan analyses them);
    the plan is the same. A file above ``config.max_file_size`` bytes, or whose planning passes
    ``file_time_limit`` seconds (checked between the steps of its planning: see :mod:`mpsready.migrate.planfile`),
    is listed in ``Plan.errors`` and its findings as manual, with the reason.

    ``select``/``ignore`` are rule codes or prefixes. Raises :class:`~mpsready.errors.UsageError` for a
    missing path. A file libcst cannot parse is listed in ``Plan.errors`` and left untouched.
    """
    target = Path(path)
    state = _Rounds(target, select, ignore, config or ScanConfig(), file_time_limit)
    first = state.round(progress)
    rounds = [first]
    while rounds[-1].files and len(rounds) < MAX_ROUNDS:
        state.overlay.update({fp.path: fp.after.encode("utf-8") for fp in rounds[-1].files})
        rounds.append(state.round(None))
    plan = _merge(rounds, state)
    plan.manual = _one_per_line(plan.manual)
    return plan


def _one_per_line(records: list[ManualRecord]) -> list[ManualRecord]:
    """``records`` with the entries that say the same thing about the same line made one, counted in the reason:
    two findings of a rule on one line (nanoGPT's ``x.pin_memory()..., y.pin_memory()...``) are one piece of
    manual work, and two identical lines read as a bug of the listing."""
    counts: Counter = Counter()
    for m in records:
        counts[(m.code, m.path, m.line, m.reason)] += m.count
    out: list[ManualRecord] = []
    for key, n in counts.items():  # insertion order: the first entry's place
        out.append(ManualRecord(key[0], key[1], key[2], key[3] if n == 1 else f"{key[3]} ({n} on this line)", n))
    return out


class _Rounds:
    """What the rounds of one :func:`migrate_path` share: the files' bytes after the rounds so far (``overlay``,
    relative path -> bytes), the scan's in-memory analyses (only changed files are analysed again), the outcome
    of each file planned (reused when its text, findings and selections are the same) and the selections seen."""

    def __init__(self, target: Path, select: tuple[str, ...], ignore: tuple[str, ...], config: ScanConfig,
                 file_time_limit: float) -> None:
        from mpsready.scan.cache import MemoCache

        self.target, self.select, self.ignore, self.config = target, select, ignore, config
        self.file_time_limit = file_time_limit
        self.root = target if target.is_dir() else target.parent
        self.overlay: dict[str, bytes] = {}
        self.memo = MemoCache()
        self.outcomes: dict[tuple, FileOutcome | None] = {}
        self.selections: list[str] = []  # in the order first seen; only grows
        self.texts: dict[str, list[str]] = {}  # relative path -> the text each round planned from (round 1: disk)
        self.number = 0  # the round being planned (1-based)
        # after round 1, per file it changed: (its selections, the findings it left unfixed as (code, message), its
        # manual and kept records); round 2 carries those records over instead of planning the file again when
        # the scan of the result reports exactly those findings (see _plan_round)
        self.left: dict[str, tuple[tuple, Counter, list[ManualRecord], list[ManualRecord], set]] = {}
        self.texts_before: dict[str, str] = {}  # the text on disk of each file round 1 changed
        self.carried: set[int] = set()  # id() of records carried over: already in the lines on disk
        self.selection_memo: dict[tuple[str, bytes], list[str]] = {}  # (path, sha256) -> mps_selections
        self.imports_memo: dict[tuple[str, bytes], tuple | None] = {}  # (path, sha256) -> programs.imports_of
        self.py_now: dict[str, tuple[tuple[str, bytes], bytes]] = {}  # this round's .py files: memo key, bytes

    def round(self, progress: PlanProgress | None) -> Plan:
        self.number += 1
        return _plan_round(self, progress)


R = TypeVar("R", "ManualRecord", "FindingRef")


def _signature(findings: list[Finding]) -> tuple:
    return tuple((f.code, f.location.line, f.location.column, f.message, repr(f.evidence)) for f in findings)


def _plan_round(state: _Rounds, progress: PlanProgress | None) -> Plan:
    """One round: scan (the overlay instead of the disk for the files earlier rounds changed), then plan."""
    target, root = state.target, state.root
    scan = scan_path(target, state.config, progress=progress.scan if progress else None, overlay=state.overlay,
                     memo=state.memo)
    transforms = all_transforms()
    codes = sorted({c for t in transforms for c in t.codes} | {f.code for f in scan.findings})
    chosen = _selected(codes, state.select, state.ignore)
    plan = Plan(str(root), torch_floor=torch_floor(scan))
    by_path: dict[str, list[Finding]] = {}
    for f in scan.findings:
        if f.location.path and f.code in chosen:
            by_path.setdefault(f.location.path, []).append(f)
    plan.findings_before = sum(len(v) for v in by_path.values())
    if target.is_dir():
        cfg = scan.config
        files = [(pf.relpath, pf.abspath) for pf in walk(root, exclude=cfg.exclude + cfg.report_exclude,  # + the project's
                                                           max_file_size=cfg.max_file_size).files if pf.python or pf.notebook]
    else:
        files = [(target.name, str(target))]
    places, follow = _round_places(state, scan, files)
    limit = scan.config.max_file_size
    plan.leftovers = find_leftovers(root, [abspath for _, abspath in files])
    handled: set[int] = set()
    unparsed: set[str] = set()  # files listed in plan.errors: their findings are left as they are, for that reason
    jobs = [FileJob(rel, abspath, by_path.get(rel, []), tuple(sorted(chosen)), plan.torch_floor,
                    for_file(rel, places, follow), limit, state.file_time_limit,
                    data=state.overlay.get(rel)) for rel, abspath in files]
    # a file's plan reads its selections only through device_source.resolve: whether there is one, and the first
    # three places it names (a later round's new places, appended, leave the plan of an unchanged file as it was)
    keys = [(job.rel, hashlib.sha256(job.data).hexdigest() if job.data is not None else None,
             _signature(job.findings), job.chosen, job.torch_floor, job.selections[:3], len(job.selections) > 3)
            for job in jobs]
    carry = {job.rel for job in jobs if _settled(state, job)}
    todo = [job for job, key in zip(jobs, keys) if key not in state.outcomes and job.rel not in carry]
    fresh = iter(_outcomes(todo, scan.config.jobs))
    left_now: dict[str, tuple[tuple, Counter]] = {}
    for index, (job, key) in enumerate(zip(jobs, keys)):
        if job.rel in carry:  # round 2: what round 1 left here is all the scan reports: the same records
            handled |= _carry(state, plan, job)
            continue
        if key in state.outcomes:
            out = state.outcomes[key]
        else:
            out = state.outcomes[key] = next(fresh)
        if progress:
            progress.plan(index, len(files))
        if out is None:
            continue  # nothing a transform would change: the findings are reported as kept below
        if out.error is not None:
            plan.errors.append(out.error)
            unparsed.add(job.rel)
            continue
        handled |= {id(job.findings[i]) for i in out.handled}
        plan.fixed += [finding_ref(f) for f in (job.findings[i] for i in out.fixed)]
        if state.number == 1 and out.file is not None:
            left_now[job.rel] = _left(state, job, out, plan.torch_floor)
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
        record = _record(f, reason)
        (plan.kept if kind == "kept" else plan.manual).append(record)
    plan.fixed.sort(key=lambda r: (r.path or "", r.line or 0, r.code))
    plan.manual.sort(key=lambda m: (m.path or "", m.line or 0, m.code))
    plan.kept.sort(key=lambda m: (m.path or "", m.line or 0, m.code))
    _remember(state, plan, left_now)
    return plan


def _carry(state: _Rounds, plan: Plan, job: FileJob) -> set[int]:
    """Round 1's manual and kept records of ``job``'s file into ``plan`` (see :func:`_settled`); the ids of the
    findings they answer."""
    _, _, manual, kept, _ = state.left[job.rel]
    plan.manual += manual
    plan.kept += kept
    state.carried |= {id(m) for m in manual}
    return {id(f) for f in job.findings}


def _left(state: _Rounds, job: FileJob, out: FileOutcome, floor: tuple[int, int] | None) -> tuple[tuple, Counter]:
    """What round 1 left unfixed in a file it changed: its selections and (code, message shape, needs no change)."""
    assert out.file is not None  # the caller's test
    state.texts_before[job.rel] = out.file.before
    fixed = set(out.fixed)
    return _selections_key(job), Counter((f.code, _shape(f.message), bucket(f, floor)[0] == "kept")
                                         for i, f in enumerate(job.findings) if i not in fixed)


def _remember(state: _Rounds, plan: Plan, left_now: dict[str, tuple[tuple, Counter]]) -> None:
    """After round 1: per file it changed, what :func:`_settled` compares round 2's scan with, and the records."""
    fixed_at = {(r.code, r.path, r.line) for r in plan.fixed}
    for rel, (sel, left) in left_now.items():
        manual = [m for m in plan.manual if m.path == rel]
        # a note on a line an edit fixed (autocast made torch.amp.autocast('cuda') below the floor: "left off on
        # MPS"): the scan of the result reports that line again, under the note's code
        notes: set[tuple]
        if rel.endswith(".ipynb"):  # a notebook's notes and fixed findings name the cell and the line in it
            cells = {(r.code, r.cell, r.cell_line) for r in plan.fixed if r.path == rel and r.cell is not None}
            notes = {(m.code, cell_of(m), m.line) for m in manual if (m.code, cell_of(m), m.line) in cells}
        else:
            notes = {(m.code, m.line) for m in manual if (m.code, rel, m.line) in fixed_at}
        state.left[rel] = (sel, left, manual, [m for m in plan.kept if m.path == rel], notes)


def _where_noted(f: Finding, on_disk: Callable[[int | None], int | None] | None, notebook: bool) -> tuple | None:
    """Where round 1's notes are keyed: (code, cell, line in the cell) in a notebook (the cells round 1 did not add
    lines to keep their lines), else (code, the line on disk)."""
    if notebook:
        ev = f.evidence or {}
        return (f.code, ev.get("cell"), ev.get("cell_line"))
    return (f.code, on_disk(f.location.line)) if on_disk is not None else None


def _shape(message: str) -> str:
    """A finding's message without its digits: a line it names (``backend assigned at line 238``) moves when an
    earlier edit adds lines."""
    return "".join(c for c in message if not c.isdigit())


def _selection_places(state: _Rounds, scan: ScanResult, files: list[tuple[str, str]]) -> list[str]:
    """Where the project selects its device itself, as this round sees it: code that cannot see such a place makes no
    choice of its own (:mod:`mpsready.migrate.selections`: the scan's API104 findings that are not plain, and the
    selections that already consider MPS)."""
    # a plain selection ("cuda" if torch.cuda.is_available() else "cpu") chooses as the helper does: no obstacle
    api104: dict[str, list[Finding]] = {}
    for f in scan.findings:
        if f.code == "API104" and f.location.path:
            api104.setdefault(f.location.path, []).append(f)
    seen: list[str] = []
    for rel, abspath in files:
        try:
            data = state.overlay[rel] if rel in state.overlay else Path(abspath).read_bytes()
        except OSError:
            seen += [finding_place(f) for f in api104.get(rel, [])]
            continue
        seen += [finding_place(f) for f in blocking(api104.get(rel, []), data)]
        memo_key = (rel, hashlib.sha256(data).digest())  # a file the round before left as it was: the same answer
        if memo_key not in state.selection_memo:
            state.selection_memo[memo_key] = mps_selections(rel, data)
        seen += state.selection_memo[memo_key]
        if rel.endswith(".py"):
            state.py_now[rel] = (memo_key, data)
    return seen


def _round_places(state: _Rounds, scan: ScanResult, files: list[tuple[str, str]]) -> tuple[tuple[str, ...], dict | None]:
    """The selections seen so far (they only grow from round to round) and which of them each script follows."""
    state.py_now = {}
    seen = _selection_places(state, scan, files)
    state.selections += [p for p in dict.fromkeys(seen) if p not in state.selections]
    places = tuple(state.selections)
    follow = _programs(state, places, scan.config.max_file_size)
    state.py_now = {}
    return places, follow


def _programs(state: _Rounds, places: tuple[str, ...], limit: int) -> dict[str, frozenset[str]] | None:
    """Which files' selections each script can run under (:mod:`mpsready.migrate.programs`); ``None``: every script
    follows every script's selection (no script selection at all, or the programs cannot be told). Read only when a
    script selects its device; a file above the scan's size limit is not parsed (the programs are then not told)."""
    selecting = {path_of(p) for p in places if not path_of(p).endswith(".ipynb")}
    if not selecting:
        return None
    imports = {}
    for rel, (key, data) in state.py_now.items():
        if key not in state.imports_memo:
            state.imports_memo[key] = imports_of(rel, data) if len(data) <= limit else None
        imports[rel] = state.imports_memo[key]
    return followed(imports, selecting)


def _selections_key(job: FileJob) -> tuple:
    return job.selections[:3], len(job.selections) > 3


def _settled(state: _Rounds, job: FileJob) -> bool:
    """In round 2, whether the file ``job`` plans is one round 1 changed and the scan of the result reports only
    findings round 1 left there unfixed (the same codes and messages, digits aside; of those, only ones needing no
    change may be gone; guarded ones are left as they are, and one on a line round 1 both fixed and noted, under
    the note's code, is that note), with the same selections in view: its
    plan would make no edit and list what round 1 listed, so round 1's records are carried over instead of
    parsing, indexing and planning the file again (a later round needs a file again only where the edits made
    something new visible: an ``import torch`` that makes the scan report a ``torch.cuda`` call). A notebook's
    records name its cells and their lines, which no round changes the meaning of."""
    if state.number != 2 or job.rel not in state.left:
        return False
    sel, left, _, _, notes = state.left[job.rel]
    if sel != _selections_key(job):
        return False
    notebook = job.rel.endswith(".ipynb")
    on_disk = _line_map(state.texts_before[job.rel], (job.data or b"").decode("utf-8")) \
        if notes and not notebook else None
    # a finding round 1's own edit put behind a CUDA check (the guard around `torch.cuda.empty_cache()` it adds
    # beside the MPS call) comes back guarded: left as it is, as a transform leaves every guarded finding
    now = Counter((f.code, _shape(f.message)) for f in job.findings if not (f.evidence or {}).get("guarded")
                  and _where_noted(f, on_disk, notebook) not in notes)
    before = Counter({(code, message): n for (code, message, _), n in left.items()})
    may_go = Counter({(code, message): n for (code, message, kept), n in left.items() if kept})
    return not (now - before) and not ((before - now) - may_go)


def _line_map(before: str, after: str) -> Callable[[int | None], int | None]:
    """Lines of ``after`` -> lines of ``before`` (1-based): equal lines exactly, a changed line to its place in
    the changed block, an inserted line to the line before which it was inserted."""
    a, b = before.split("\n"), after.split("\n")
    table: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            table[j + 1] = (i1 + min(j - j1, max(i2 - i1 - 1, 0)) + 1) if tag != "insert" else min(i1 + 1, len(a))
    return lambda line: table.get(line, line) if line is not None else None


def _merge(rounds: list[Plan], state: _Rounds) -> Plan:
    """One plan from the rounds (see :func:`migrate_path`)."""
    first, last = rounds[0], rounds[-1]
    if len(rounds) == 1:
        return first
    files: dict[str, FilePlan] = {fp.path: fp for fp in first.files}
    original = {fp.path: fp.before for fp in first.files}  # each file's text on disk
    fixed = list(first.fixed)
    for later in rounds[1:]:
        # the later round's lines -> the lines on disk (its input differs from the disk only where it changed)
        maps = {fp.path: _line_map(original[fp.path], fp.before) for fp in later.files if fp.path in original}
        for fp in later.files:
            base, m = files.get(fp.path), maps.get(fp.path)
            if base is None:  # first changed in this round: its text before is the disk's
                files[fp.path] = fp
                original[fp.path] = fp.before
                continue
            base.after = fp.after
            base.edits = base.edits + [dataclasses.replace(e, line=m(e.line) or e.line) if m and e.cell is None else e
                                       for e in fp.edits]
        fixed += [_mapped(r, maps) for r in later.fixed]
    # the last round's manual and kept entries (what is left), in the lines of the file on disk
    maps = {rel: _line_map(original[rel], data.decode("utf-8")) for rel, data in state.overlay.items() if rel in original}
    plan = Plan(first.root, files=list(files.values()), torch_floor=first.torch_floor,
                findings_before=first.findings_before, leftovers=first.leftovers, rounds=len(rounds))
    plan.fixed = sorted(fixed, key=lambda r: (r.path or "", r.line or 0, r.code))  # two on one line: both
    plan.manual = sorted((m if id(m) in state.carried else _mapped(m, maps) for m in last.manual),
                         key=lambda m: (m.path or "", m.line or 0, m.code))
    # left as they are: the first round's (a later round only sees the code the edits put behind a CUDA check)
    plan.kept = list(first.kept)
    plan.errors = list(dict.fromkeys(e for r in rounds for e in r.errors))
    return plan


def _mapped(record: R, maps: dict[str, Callable[[int | None], int | None]]) -> R:
    """``record`` (a ManualRecord or FindingRef of a later round) with its line in the file on disk; a notebook's
    lines are its cells' and are kept."""
    m = maps.get(record.path or "")
    if m is None or (record.path or "").endswith(".ipynb"):
        return record
    return dataclasses.replace(record, line=m(record.line))

"""Plan one file of a migration (read, guard, parse, transform) and many files, in a process pool when asked.

:func:`plan_file` is everything :func:`mpsready.migrate.engine.migrate_path` does per file; it takes a picklable
:class:`FileJob` and answers a picklable :class:`FileOutcome` (findings named by their index in the job, since
identities do not cross processes), so :func:`outcomes` can run it in a process pool as the scan analyses
files (``ScanConfig.jobs``; a pool only from :data:`POOL_MIN_FILES` files, where it costs less than it saves).
Results come back in the files' order: the plan is the same with one process or many.

Guards per file: a file above the scan's ``max_file_size`` is not read; a file whose planning passes its time
limit (checked after the parse and after each transform: a step already running is not interrupted) is left
as it is. Both become ``Plan.errors`` entries with the reason, and the file's findings manual entries.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mpsready.findings import Finding
from mpsready.migrate.fixability import bucket
from mpsready.migrate.interface import MigrateError, Transform
from mpsready.scan.engine import gc_paused

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mpsready.migrate.engine import FilePlan, ManualRecord

FILE_TIME_LIMIT_S = 120.0
POOL_MIN_FILES = 64  # as the scan's pool (mpsready.scan.engine): below this a pool costs more than it saves
BOM = "\ufeff"


@dataclass(frozen=True)
class FileJob:
    """One file to plan: its path relative to the root (POSIX) and absolute, the scan findings of the chosen
    codes in it, the chosen codes, the project's PyTorch floor, where the project selects its device, the
    byte limit and the time limit in seconds."""

    rel: str
    abspath: str
    findings: list[Finding]
    chosen: tuple[str, ...]
    torch_floor: tuple[int, int] | None
    selections: tuple[str, ...]
    max_bytes: int
    time_limit: float
    data: bytes | None = None  # the file's bytes after an earlier round's edits (None: read it from disk)


@dataclass
class FileOutcome:
    """What planning one file gave: ``error`` (the file is left as it is, for that reason) or the changed
    ``file`` (``None``: nothing changed), the manual and kept entries, and the job's findings it handled and fixed
    (indices into ``FileJob.findings``)."""

    error: str | None = None
    file: FilePlan | None = None
    manual: list[ManualRecord] = field(default_factory=list)
    kept: list[ManualRecord] = field(default_factory=list)
    handled: list[int] = field(default_factory=list)
    fixed: list[int] = field(default_factory=list)


_TRANSFORMS: dict[tuple[str, ...], list[Transform]] = {}  # per process: the transforms of the chosen codes


def _transforms(chosen: tuple[str, ...]) -> list[Transform]:
    if chosen not in _TRANSFORMS:
        from mpsready.migrate.transforms import all_transforms

        _TRANSFORMS[chosen] = [t for t in all_transforms() if set(t.codes) & set(chosen)]
    return _TRANSFORMS[chosen]


def _worth_detecting(job: FileJob, transforms: list[Transform]) -> bool:
    """Files without findings are parsed only when a word a self-detecting transform needs appears in them
    (a cheap prefilter, as the scan's triggers: the transform then decides on the syntax tree)."""
    if not any(t.detects for t in transforms):
        return False
    try:
        data = job.data if job.data is not None else Path(job.abspath).read_bytes()
    except OSError:
        return False
    text = data.decode("utf-8", errors="replace")
    return any(t.wants(text) for t in transforms)


def plan_file(job: FileJob) -> FileOutcome | None:
    """Plan ``job``'s file; ``None`` when no transform would change it (every finding kept, no word a
    detecting transform looks for).

    The cyclic garbage collector is paused while one file is planned (as the scan pauses it while it parses:
    :func:`mpsready.scan.engine.gc_paused`) and runs again between files. Its passes walk every live object,
    the file's whole tree and index included, and a big file allocates enough to start many of them: the
    one-file run of ``benchmarks/migrate_bench.py`` with 1,000 edits took 0.513 s with the collector and 0.425 s
    paused (CPU medians of 9 alternating runs in one process, loaded machine; the synthetic tree: 3.06 s and
    3.02 s, within the noise). Nothing is left
    for it to free meanwhile: the tree, the index and the file context hold no reference cycle and go by
    reference counting (``tests/migrate/test_no_cycles.py``)."""
    with gc_paused():
        return _plan_file(job)


def _plan_file(job: FileJob) -> FileOutcome | None:
    from mpsready.migrate.engine import EditRecord, FilePlan, ManualRecord  # here: the engine imports this module
    from mpsready.migrate.notebook import migrate_notebook
    from mpsready.migrate.source import migrate_source

    transforms = _transforms(job.chosen)
    findings, rel = job.findings, job.rel
    if all(bucket(f, job.torch_floor)[0] == "kept" for f in findings) and not _worth_detecting(job, transforms):
        return None
    try:
        if job.data is not None:
            data = job.data
        else:
            with open(job.abspath, "rb") as fh:
                data = fh.read(job.max_bytes + 1)  # the scan's limit, in single-file mode too (a 55 MB file took 5 GB)
        if len(data) > job.max_bytes:
            return FileOutcome(f"{rel}: above the {job.max_bytes}-byte limit (--max-file-size); not read")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return FileOutcome(f"{rel}: not read ({exc})")
    fp = FilePlan(rel, job.abspath, text, text, hashlib.sha256(data).hexdigest())
    bom = BOM if text.startswith(BOM) else ""  # libcst drops it and json refuses it: set aside, put back
    text = text[len(bom):]
    position = {id(f): i for i, f in enumerate(findings)}
    out = FileOutcome()
    try:
        if rel.endswith(".ipynb"):
            after, edits, manual, done, fixed = migrate_notebook(text, rel, findings, transforms, job.torch_floor,
                                                                  selections=job.selections)
        else:
            res = migrate_source(text, rel, findings, transforms, torch_floor=job.torch_floor,
                                 selections=job.selections, time_limit=job.time_limit)
            after, manual = res.text, res.manual
            edits = [EditRecord(e.code, e.line, e.what, review=e.review, needs_torch=e.needs_torch) for e in res.edits]
            done = fixed = [f for e in res.edits for f in e.resolves()]
    except MigrateError as exc:
        return FileOutcome(str(exc))
    out.handled = [position[id(f)] for f in done if id(f) in position]
    out.fixed = [position[id(f)] for f in fixed if id(f) in position]
    for m in manual:
        if m.finding is not None and id(m.finding) in position:
            out.handled.append(position[id(m.finding)])
        (out.kept if m.kept else out.manual).append(ManualRecord(m.code, rel, m.line, m.reason))
    fp.after, fp.edits = bom + after, edits
    out.file = fp if fp.changed else None
    return out


def _plan_batch(batch: list[FileJob]) -> list[FileOutcome | None]:
    return [plan_file(job) for job in batch]


def outcomes(jobs: list[FileJob], processes: int) -> Iterator[FileOutcome | None]:
    """:func:`plan_file` of each job, in order; in a pool of ``processes`` when above one and there are at
    least :data:`POOL_MIN_FILES` jobs."""
    if processes > 1 and len(jobs) >= POOL_MIN_FILES:
        size = max(8, len(jobs) // (processes * 8))
        batches = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        with ProcessPoolExecutor(max_workers=processes) as pool:
            for batch_out in pool.map(_plan_batch, batches):
                yield from batch_out
        return
    for job in jobs:
        yield plan_file(job)

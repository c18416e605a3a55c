"""What the analysis of one Python source yields: :class:`CodeResult`, its typed records, and the raw finding dicts.

The result is plain data so it can cross a process pool and live in the content-hash cache
(:mod:`mpsready.scan.cache`): :meth:`CodeResult.to_dict` writes each record as a JSON list in its field order
and :meth:`CodeResult.from_dict` reads it back. Paths and scopes are added later by the engine. Lines are
1-based, columns 1-based ``ast`` byte offsets (``col_offset + 1``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Severity


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One import statement as written: ``import a.b`` is ``(0, "a.b", (), line, guard)``, ``from ..m import x, y``
    is ``(2, "m", ("x", "y"), line, guard)`` (relative imports unresolved). ``guard`` is True under a try/except
    with a fallback, the name of the module-level function it sits in when every call of that function in the
    file is under one (:func:`mpsready.scan.code.summaries.guard_by_callers`), else False."""

    level: int
    module: str
    names: tuple[str, ...]
    line: int
    guard: bool | str


@dataclass(frozen=True, slots=True)
class CudaSourceRef:
    """A ``.cu``/``.cuh`` file named by a string literal: its file name, the literal's line, and the line of a
    try/except fallback around the build in the same scope (``None`` without one)."""

    name: str
    line: int
    fallback_line: int | None


@dataclass(frozen=True, slots=True)
class F64Sink:
    """A tensor made from the result of a project call (``callee``) and moved to a device uncast, at
    ``line``/``column``, by ``factory`` (``torch.from_numpy``)."""

    callee: str
    line: int
    column: int
    factory: str


@dataclass(frozen=True, slots=True)
class ParamSink:
    """Parameter ``index`` of ``function`` made into a tensor by ``factory`` and moved to a device uncast."""

    function: str
    index: int
    line: int
    column: int
    factory: str


@dataclass(frozen=True, slots=True)
class F64Call:
    """A call of the project function ``callee`` passing a NumPy float64 array as positional argument ``index``."""

    callee: str
    index: int
    line: int


@dataclass(frozen=True, slots=True)
class PureDef:
    """A module-level pure-PyTorch reference function (``attn_core_pytorch``) and the line of its ``def``."""

    name: str
    line: int


@dataclass(frozen=True, slots=True)
class DefSpan:
    """A module-level function or a method: its name and its first and last line."""

    name: str
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class LineSpan:
    """The first and last line of a block (the body of a module-level ``if __name__ == "__main__":``)."""

    first: int
    last: int


# field name -> record type of the list fields that hold records (JSON: one list per record)
RECORD_FIELDS: dict[str, type] = {"imports": ImportRecord, "cu_refs": CudaSourceRef, "f64_sinks": F64Sink,
                                  "param_sinks": ParamSink, "f64_calls": F64Call, "pure_defs": PureDef,
                                  "def_spans": DefSpan, "main_guards": LineSpan}


def _record(cls: type, row: list[Any]) -> Any:
    if cls is ImportRecord:  # JSON has no tuples
        return ImportRecord(row[0], row[1], tuple(row[2]), row[3], row[4])
    return cls(*row)


@dataclass
class CodeResult:
    """What one Python source yields. ``findings`` are dicts (:func:`raw_finding`): code, severity, line, column,
    message, fix, source, evidence and optionally ``scope`` (a forced scope such as ``distributed``).
    ``suppress`` maps a line number (as a string, for JSON) to the codes ignored there (``["*"]`` for all)."""

    findings: list[dict[str, Any]] = field(default_factory=list)
    imports: list[ImportRecord] = field(default_factory=list)
    suppress: dict[str, list[str]] = field(default_factory=dict)
    extensions: list[str] = field(default_factory=list)  # module names of CUDA extensions built here
    parsed: bool = True
    cu_refs: list[CudaSourceRef] = field(default_factory=list)
    # the project model's per-file summaries, joined across files by the engine (mpsready.scan.model):
    surfaces: list[dict[str, Any]] = field(default_factory=list)  # configuration surfaces (model.surfaces)
    f64_returns: list[str] = field(default_factory=list)  # functions returning a NumPy float64 array
    f64_sinks: list[F64Sink] = field(default_factory=list)
    param_sinks: list[ParamSink] = field(default_factory=list)
    f64_calls: list[F64Call] = field(default_factory=list)
    pure_defs: list[PureDef] = field(default_factory=list)
    pure_refs: list[str] = field(default_factory=list)  # those names used here other than by their definition
    # lines of `if` tests that send only CUDA tensors to a custom autograd Function (`x.device.type != "cuda"`):
    # a pure-PyTorch path wired correctly (what `mpsready migrate` makes of an EXT108 fallback keyed on the CPU)
    device_dispatch: list[int] = field(default_factory=list)
    places: bool = False  # the source moves or creates something on a device (.to(, .cuda(, device=)
    # the source compares a value with 'mps' (`device == "mps"`, `"mps" in device`): it uses MPS when asked
    mps_on_request: bool = False
    # names whose truth selects MPS (`if apple_silicon: device = torch.device("mps")`): summaries.mps_switches
    mps_switches: list[str] = field(default_factory=list)
    def_spans: list[DefSpan] = field(default_factory=list)
    entry: bool = False  # runs as a program: `if __name__ == "__main__":` or module-level calls (a script)
    main_guards: list[LineSpan] = field(default_factory=list)  # module-level `if __name__ == "__main__":` bodies
    # string literals passed to a call that name a Python file ("scripts/ppo.py"): scripts a launcher starts
    launches: list[str] = field(default_factory=list)
    # attribute names assigned a value that asks torch.cuda (`args.cuda = not args.no_cuda and
    # torch.cuda.is_available()`): a test on them is a CUDA-availability check whatever the option's default
    availability_attrs: list[str] = field(default_factory=list)
    # import line -> why a Mac running the defaults never executes it (code/context.py: note_branch_import)
    skipped_imports: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (records as lists in field order), read back by :meth:`from_dict`."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in RECORD_FIELDS:
                value = [[getattr(rec, s) for s in rec.__slots__] for rec in value]
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CodeResult":
        """The inverse of :meth:`to_dict`; raises ``KeyError``/``TypeError``/``IndexError`` on a damaged entry."""
        out = cls(d["findings"], [_record(ImportRecord, row) for row in d["imports"]], d["suppress"], d["extensions"],
                  d["parsed"])
        for f in dataclasses.fields(cls):
            name = f.name
            if name in ("findings", "imports", "suppress", "extensions", "parsed") or name not in d:
                continue
            kind = RECORD_FIELDS.get(name)
            setattr(out, name, [_record(kind, row) for row in d[name]] if kind is not None else d[name])
        return out


def raw_finding(rule: Any, line: int, col: int, message: str, *, severity: Severity | None = None,
                fix: str | None = None, evidence: dict[str, Any] | None = None, scope: str | None = None,
                end: tuple[int | None, int | None] | None = None) -> dict[str, Any]:
    """One raw finding of ``rule`` (a :class:`mpsready.rules.Rule`). ``line`` is 1-based, ``col`` an ``ast``
    column (0-based UTF-8 byte offset) stored 1-based; ``end`` is the node's ``(end_lineno, end_col_offset)``,
    stored as ``end_line`` and the 1-based byte column just past the node (``end_column``); outputs convert byte
    columns to code points (:mod:`mpsready.scan.formats.locate`)."""
    d: dict[str, Any] = {
        "code": rule.code, "severity": (severity or rule.severity).value, "line": line, "column": col + 1,
        "message": message, "fix": fix or rule.fix, "source": rule.source, "evidence": evidence or {},
    }
    if end is not None and end[0] is not None and end[1] is not None:
        d["end_line"], d["end_column"] = end[0], end[1] + 1
    if scope:
        d["scope"] = scope
    return d

"""Which findings ``mpsready migrate`` fixes, from the transforms' own declarations, and the effort buckets.

Each transform declares what it fixes in its spec (:mod:`mpsready.migrate.specs`: the codes, the auto-fix of
each, the condition per finding); this module puts them together. Importing it registers every declared
AutoFix with the rule registry (``docs/rules.md`` renders them), :func:`bucket` answers per finding, and the
scan's effort line and its outlook ("migrate can make it") read :func:`buckets` through the rule registry
(:func:`mpsready.rules.fixability`), never by importing migrate. Imports nothing heavy (no libcst).

The effort is an **estimate**: it is computed from the findings alone, while ``mpsready migrate`` decides on
the syntax tree. The two agree on the test fixtures (tests/migrate/test_agreement.py); on real code migrate
may still list a finding as manual when the code around it has an unusual shape (it then says why), may find a
CUDA check the scan did not (the finding is then left as it is), and makes edits no scan finding asks for
(``torch.load`` without ``map_location``, guarded imports, CPU-keyed fallbacks the scan does not report).

Codes decided apart from the transforms: API121 (a config file's ``device: cuda``) is a config value, not a
code edit: the outlook prints the override and migrate edits no config file (bucket ``other``); API120
(``assert x.is_cuda``) and EXT109 (an unwired pure-PyTorch path) need a device dispatch written by a person
(manual); dependency findings such as DEP111 (a pin below Mac support) are declared-dependency changes, not
code (bucket ``other``).
"""

from __future__ import annotations

from collections.abc import Iterable

from mpsready import rules as registry
from mpsready.findings import Finding
from mpsready.migrate.specs import Bucketed, Floor, Spec, all_specs
from mpsready.rules import AutoFix

CODE_PREFIXES = ("API", "DTY", "EXT")

KEPT = {
    "API105": "cuDNN switches do nothing on a Mac and never raise: left as they are",
    "API106": "TF32 switches do nothing on a Mac and never raise: left as they are",
    "API114": "torch.compile is a choice for the Mac run (a flag), not a mechanical edit",
    "API117": "a device generator is a reproducibility choice, not a mechanical edit",
}
# code findings that are not code edits (bucket "other"): the scan's outlook prints the flag or config change
NOT_CODE = {
    "API121": "a config value: override it for the Mac run (the outlook prints the override); migrate edits no "
              "config file",
}

SPECS: list[Spec] = all_specs()
FIXES: dict[str, AutoFix] = {code: fix for spec in SPECS for code, fix in spec.fixes.items()}
_DECIDERS = [(spec.codes, spec.decide) for spec in SPECS if spec.decide is not None]

for _code, _fix in sorted(FIXES.items()):
    registry.register_autofix(_code, _fix)


def declared_floor(dependencies: Iterable) -> Floor:
    """The lowest (major, minor) PyTorch the project's declarations (scan ``Dependency`` records) allow; ``None``
    without a lower bound."""
    floors: list[tuple[int, int]] = []
    for dep in dependencies:
        if dep.name.lower() != "torch" or dep.optional:
            continue
        from packaging.specifiers import InvalidSpecifier, SpecifierSet  # here: a scan without a torch pin skips it

        try:
            spec = SpecifierSet(dep.specifier.split(";")[0].strip())
        except InvalidSpecifier:
            continue
        for s in spec:
            if s.operator in (">=", "==", "~=", ">"):
                parts = s.version.split(".")
                if len(parts) >= 2 and parts[0].isdigit() and parts[1].split("+")[0].isdigit():
                    floors.append((int(parts[0]), int(parts[1].split("+")[0])))
    return min(floors) if floors else None


def bucket(f: Finding, floor: Floor = None) -> tuple[str, str]:
    """``("auto", what)``, ``("manual", why)``, ``("kept", why)`` or ``("other", "")`` (not a code finding).
    ``floor``: the project's declared PyTorch floor (:func:`declared_floor`; ``None``: not declared), which decides
    the API108/API109 edits. The condition per finding is the answering transform's (its spec's ``decide``)."""
    if not f.code.startswith(CODE_PREFIXES) or not f.location.path:
        return "other", ""
    if (f.evidence or {}).get("guarded"):
        return "kept", "already behind a CUDA check: skipped on a Mac"
    if (f.evidence or {}).get("readme_usage"):  # a README's usage code (issue 32): no transform edits it
        return "manual", "edit the documented usage by hand"
    if f.code in NOT_CODE:
        return "other", NOT_CODE[f.code]
    if f.code in KEPT:
        return "kept", KEPT[f.code]
    for codes, decide in _DECIDERS:
        if f.code in codes:
            answer = decide(f, floor)  # type: ignore[misc]  # filtered on not None above
            if answer is not None:
                return answer
    if f.code in FIXES:
        return "auto", FIXES[f.code].summary
    try:
        fix = registry.get(f.code).fix
    except KeyError:
        fix = "see the rule"
    return "manual", fix


def buckets(findings: Iterable[Finding], floor: Floor = None) -> list[Bucketed]:
    """``(finding, kind, why)`` for each finding: :func:`bucket`, then each spec's ``refine`` (what one edit fixes
    for two findings, as the API102 finding on the argument of the ``set_default_tensor_type`` call API119
    rewrites)."""
    out = [(f, *bucket(f, floor)) for f in findings]
    for spec in SPECS:
        if spec.refine is not None:
            spec.refine(out)
    return out


def effort(findings: Iterable[Finding], floor: Floor = None) -> dict[str, int]:
    """``{"auto_fixable", "manual", "kept", "files_touched"}`` over the code findings: an **estimate** of what
    ``mpsready migrate`` will do (see the module doc); ``files_touched`` counts the files with an auto-fixable
    finding (migrate may touch more, for the edits no scan finding asks for)."""
    out = {"auto_fixable": 0, "manual": 0, "kept": 0, "files_touched": 0}
    files: set[str] = set()
    for f, kind, _ in buckets(findings, floor):
        if kind == "auto":
            out["auto_fixable"] += 1
            files.add(f.location.path or "")
        elif kind in ("manual", "kept"):
            out[kind] += 1
    out["files_touched"] = len(files)
    return out


def plan_effort(fixed: Iterable, manual: Iterable, kept: Iterable) -> dict[str, int]:
    """The same four numbers as :func:`effort`, from a plan of ``mpsready migrate`` (records with ``code``, ``path``
    and ``line``: ``Plan.fixed``, ``Plan.manual``, ``Plan.kept``): each scan finding an edit fixes is auto-fixable
    (``files_touched``: the files holding one), each code finding left to a person manual, and a later round's
    note on a line an edit already fixed (``autocast('cuda')`` left off on MPS after ``torch.cuda.amp.autocast()``
    became ``torch.amp.autocast('cuda')``) counts once, as fixed: the estimate counts that finding once too.
    Entries that are not code findings (a notebook cell left as it is, ``INP``) are not counted."""
    from collections import Counter

    code = [r for r in fixed if r.code.startswith(CODE_PREFIXES) and r.path]  # a guarded import's DEP107: not code
    # a notebook's manual entries name the cell ("cell 9: ...") and the line in it; its fixed findings carry both
    done = Counter((r.code, r.path, getattr(r, "cell", None), getattr(r, "cell_line", None) or r.line) for r in code)
    out = {"auto_fixable": len(code), "manual": 0, "kept": 0, "files_touched": len({r.path for r in code})}
    for bucket_name, records in (("manual", manual), ("kept", kept)):
        left: Counter = Counter()
        for m in records:
            if m.code.startswith(CODE_PREFIXES) and m.path:
                # an entry standing for two findings on its line (``ManualRecord.count``) counts two
                left[(m.code, m.path, cell_of(m), m.line)] += getattr(m, "count", 1)
        # two findings on one line (get_device_name and device_count) are two; a note on a fixed line is none
        out[bucket_name] = sum(max(0, n - done[k]) for k, n in left.items())
    return out


def cell_of(record: object) -> int | None:
    """The cell a notebook's manual entry names at the head of its reason (``cell 9: ...``), else ``None``."""
    path, reason = getattr(record, "path", None) or "", getattr(record, "reason", "")
    head = reason.split(":", 1)[0] if path.endswith(".ipynb") and reason.startswith("cell ") else ""
    return int(head[5:]) if head[5:].isdigit() else None


def render_effort(e: dict, basis: str) -> str:
    """The effort sentence scan, report and migrate print alike; ``basis``: ``"estimate"`` (from the findings,
    :func:`effort`) or ``"plan"`` (what ``mpsready migrate`` planned, :func:`plan_effort`)."""
    return (f"migrate effort ({basis}): {e['auto_fixable']} auto-fixable finding(s) in {e['files_touched']} file(s) "
            f"(`mpsready migrate PATH` shows the diff), {e['manual']} manual, {e['kept']} need no change")


def effort_line(findings: Iterable[Finding], floor: Floor = None) -> str:
    """One sentence for the scan's terminal and Markdown outputs (labelled an estimate: migrate gives the plan)."""
    return render_effort(effort(findings, floor), "estimate")

"""Findings grouped the way a reader decides: by what they do to the verdict, then by rule, then by file.

* ``headline``: the finding is evidence of a checklist item that a reason of the verdict cites (the
  reason's ``item``), or a reason names its code: it limits the headline verdict;
* ``optional``: outside the project's main part (tests, docs, examples, distributed launchers, vendored
  code: ``scope``), off the main path (``reach``) or behind an off-by-default option (``behind_flag``);
* ``secondary``: everything else; it does not change the verdict.

Within a group, rules with the most severe finding first (then the most findings); within a rule, files with
the most findings first. The HTML and Markdown renderers show the first :data:`OPEN_RULES` rules of the
headline group open and collapse the rest, and within a rule list the first :data:`FILES_SHOWN` files and
:data:`PER_FILE_SHOWN` findings per file, with counts for what is folded away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding, Scope

OPEN_RULES = 3
FILES_SHOWN = 3
PER_FILE_SHOWN = 5

IMPACT_TITLES = {
    "headline": "Limits the verdict",
    "optional": "In optional parts (tests, examples, docs, launchers, vendored code, off the main path)",
    "secondary": "Secondary (does not change the verdict)",
}
_RANK = {"blocker": 0, "degrades": 1, "info": 2}


@dataclass
class FileGroup:
    path: str
    findings: list[Finding]

    @property
    def shown(self) -> list[Finding]:
        return self.findings[:PER_FILE_SHOWN]

    @property
    def folded(self) -> list[Finding]:
        return self.findings[PER_FILE_SHOWN:]


@dataclass
class RuleGroup:
    code: str
    title: str
    files: list[FileGroup] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(f.findings) for f in self.files)

    @property
    def severity(self) -> str:
        return min((x.severity.value for f in self.files for x in f.findings), key=lambda s: _RANK.get(s, 9))

    @property
    def basis(self) -> str:
        bases = {x.basis.value for f in self.files for x in f.findings}
        return bases.pop() if len(bases) == 1 else "mixed"

    @property
    def shown_files(self) -> list[FileGroup]:
        return self.files[:FILES_SHOWN]

    @property
    def folded_files(self) -> list[FileGroup]:
        return self.files[FILES_SHOWN:]

    @property
    def folded_count(self) -> int:
        return sum(len(f.findings) for f in self.folded_files)


@dataclass
class ImpactGroup:
    impact: str
    rules: list[RuleGroup]

    @property
    def title(self) -> str:
        return IMPACT_TITLES[self.impact]

    @property
    def count(self) -> int:
        return sum(r.count for r in self.rules)


def impact_of(f: Finding, headline: set[tuple[str, str]], reason_text: str) -> str:
    """``headline``, ``optional`` or ``secondary`` (module docstring)."""
    if any(code == f.code and f.message in text for code, text in headline) or (f.code and f.code in reason_text):
        return "headline"
    if f.scope != Scope.MAIN or f.reach == "off_main_path" or f.behind_flag:
        return "optional"
    return "secondary"


def _title(code: str) -> str:
    from mpsready import rules

    try:
        return rules.get(code).name
    except KeyError:
        return ""


def group_findings(report: Any) -> list[ImpactGroup]:
    """The report's findings in :class:`ImpactGroup` s (only the non-empty ones, in the order of
    :data:`IMPACT_TITLES`)."""
    v = report.verdict
    cited = {r.item for r in v.reasons if r.item is not None}
    headline = {(e.code, e.text) for it in report.checklist if it.number in cited for e in it.evidence if e.code}
    reason_text = " ".join(r.text for r in v.reasons)
    by: dict[str, dict[str, dict[str, list[Finding]]]] = {k: {} for k in IMPACT_TITLES}
    for f in report.all_findings():
        path = f.location.path or (f"stage {f.location.stage}" if f.location.stage else "(no file)")
        by[impact_of(f, headline, reason_text)].setdefault(f.code, {}).setdefault(path, []).append(f)
    out = []
    for impact, rules in by.items():
        groups = []
        for code, files in rules.items():
            fgs = [FileGroup(p, sorted(fs, key=lambda x: (x.location.line or 0))) for p, fs in files.items()]
            fgs.sort(key=lambda g: (-len(g.findings), g.path))
            groups.append(RuleGroup(code, _title(code), fgs))
        groups.sort(key=lambda r: (_RANK.get(r.severity, 9), -r.count, r.code))
        if groups:
            out.append(ImpactGroup(impact, groups))
    return out


def where(f: Finding) -> str:
    """The finding's place within its file group: ``line 12`` (or the whole location when it has no line)."""
    loc = f.location
    if loc.line is not None:
        return f"line {loc.line}" + (f" ({loc.operator})" if getattr(loc, "operator", None) else "")
    return str(loc)


def lines_of(findings: list[Finding], limit: int = 12) -> str:
    """``"lines 40, 52, 60 and 3 more"`` for folded findings of one file."""
    lines = [str(f.location.line) for f in findings if f.location.line is not None]
    if not lines:
        return f"{len(findings)} more"
    shown = ", ".join(lines[:limit])
    return f"line{'s' if len(lines) > 1 else ''} {shown}" + (f" and {len(lines) - limit} more" if len(lines) > limit else "")

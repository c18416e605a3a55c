"""The rule registry: every finding code is a documented rule.

A rule has a stable code, a short kebab-case name, a default severity and a doc
in four parts (what it detects, why it matters on MPS, an example, the fix), plus
the source of the MPS fact. Codes are grouped by prefix, one prefix per kind of
problem, so a user can select or ignore a whole group:

=======  =============================================================
prefix   kind
=======  =============================================================
``DEP``  dependencies (packages, wheel indexes, conda channels, images)
``EXT``  custom kernels and compiled extensions
``API``  CUDA-only APIs and device handling in code
``DTY``  dtypes MPS lacks or limits
``OPS``  aten operators (missing kernels, CPU fallback)
``NUM``  numerics (comparison against a reference)
``PRF``  run time and memory
``ENV``  the environment (availability, interpreter, settings)
``INP``  input the tool could not read (a bad file is a finding, never a crash)
=======  =============================================================

Stages register their rules at import time through :func:`register`;
:func:`all_rules` imports every stage's rule module (:data:`RULE_MODULES`) so the registry is complete.
A rule module holds the rules' metadata and imports no stage logic at import time, and the stage packages'
``__init__`` import nothing, so loading the registry (a static scan's SARIF lists every rule) loads rule
metadata only (``tests/foundation/test_startup.py``).
``docs/rules.md`` is generated from it (``python -m mpsready.rules > docs/rules.md``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from mpsready.findings import Severity

PREFIXES = {
    "DEP": "dependencies",
    "EXT": "custom kernels and extensions",
    "API": "CUDA-only APIs and device handling in code",
    "DTY": "dtypes",
    "OPS": "aten operators",
    "NUM": "numerics",
    "PRF": "run time and memory",
    "ENV": "environment",
    "INP": "unreadable or malformed input",
}

# Modules that define rules. A module missing here is simply not loaded.
RULE_MODULES = (
    "mpsready.scan.rules",
    "mpsready.trace.rules",
    "mpsready.record.rules",
    "mpsready.env.rules",
    "mpsready.compare.rules",
    "mpsready.numerics.rules",
    "mpsready.report.rules",
    "mpsready.migrate.fixability",  # marks the rules `mpsready migrate` fixes (auto-fix docs)
)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str  # one line: what it detects
    why: str  # what happens on MPS
    example: str
    fix: str
    source: str  # where the MPS fact comes from (doc, file and version, issue)
    # Whether `mpsready migrate` fixes the rule is not a field here: the migrate stage registers an AutoFix
    # (register_autofix) for each code its transforms answer, and the scan's outlook reads that same registry.

    @property
    def prefix(self) -> str:
        return self.code.rstrip("0123456789")


_REGISTRY: dict[str, Rule] = {}


@dataclass(frozen=True)
class AutoFix:
    """How ``mpsready migrate`` fixes a rule's findings: one paragraph, and code before and after."""

    summary: str
    before: str
    after: str


_AUTOFIX: dict[str, AutoFix] = {}


def register_autofix(code: str, fix: AutoFix) -> None:
    """Mark ``code`` auto-fixable (the migrate stage does this for each code its transforms answer). The one
    source of "migrate makes this edit": the rules page, the scan's effort and its outlook all read it."""
    _AUTOFIX[code] = fix


def autofix_codes() -> list[str]:
    """Every code with an auto-fix, sorted."""
    _load_all()
    return sorted(_AUTOFIX)


def autofix_of(code: str) -> AutoFix | None:
    """The auto-fix of ``code``, or ``None`` when ``mpsready migrate`` leaves its findings to a person."""
    _load_all()
    return _AUTOFIX.get(code)


def fixability() -> ModuleType:
    """What ``mpsready migrate`` fixes, per finding: :mod:`mpsready.migrate.fixability` (``bucket``, ``buckets``,
    ``effort``, ``effort_line``, ``declared_floor``), put together from each transform's declaration and
    importable without libcst. Stages read it here, so none imports the migrate package itself."""
    return importlib.import_module("mpsready.migrate.fixability")


def register(rule: Rule) -> Rule:
    """Add ``rule``; raises ``ValueError`` on a duplicate code or an unknown prefix."""
    if rule.prefix not in PREFIXES:
        raise ValueError(f"rule {rule.code}: unknown prefix {rule.prefix!r}")
    old = _REGISTRY.get(rule.code)
    if old is not None and old != rule:
        raise ValueError(f"duplicate rule code {rule.code}")
    _REGISTRY[rule.code] = rule
    return rule


def _load_all() -> None:
    for mod in RULE_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            # the stage (or its rules module) is not built in this checkout
            if exc.name is None or not (mod == exc.name or mod.startswith(exc.name + ".")):
                raise


def all_rules() -> list[Rule]:
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda r: r.code)


def get(code: str) -> Rule:
    """Return the rule with ``code``; raises ``KeyError`` if none is registered."""
    _load_all()
    return _REGISTRY[code]


def select(codes: list[str], patterns: list[str]) -> list[str]:
    """Codes matching any pattern: an exact code (``API101``) or a prefix (``API``)."""
    return [c for c in codes if any(c == p or (p.isalpha() and c.startswith(p)) for p in patterns)]


# The rules page as published with the repository; SARIF ``helpUri`` and annotations link into it.
PROJECT_URL = "https://github.com/mpsready/mpsready"
RULES_DOC_URL = f"{PROJECT_URL}/blob/main/docs/rules.md"


def _heading(rule: Rule) -> str:
    return f"{rule.code} `{rule.name}` ({rule.severity.value})"


def doc_anchor(rule: Rule) -> str:
    """The anchor GitHub gives the rule's heading in ``docs/rules.md``: lower case, punctuation other than
    ``-`` and ``_`` dropped, spaces turned into ``-`` (``api101-dot-cuda-call-blocker``)."""
    text = _heading(rule).lower()
    return "".join("-" if ch == " " else ch for ch in text if ch.isalnum() or ch in " -_")


def doc_url(rule: Rule) -> str:
    """Where the rule's documentation lives: ``RULES_DOC_URL#anchor``."""
    return f"{RULES_DOC_URL}#{doc_anchor(rule)}"


def render_markdown() -> str:
    """The rules documentation page, generated so that code and docs cannot drift."""
    lines = ["# mpsready rules", "", "Generated by `python -m mpsready.rules`; do not edit by hand.", ""]
    lines += ["| prefix | kind |", "|---|---|"]
    lines += [f"| `{p}` | {k} |" for p, k in PREFIXES.items()]
    lines.append("")
    for rule in all_rules():
        lines += [
            f"## {_heading(rule)}",
            "",
            rule.summary,
            "",
            f"**Why it matters on MPS.** {rule.why}",
            "",
            "**Example.**",
            "",
            "```",
            rule.example.rstrip(),
            "```",
            "",
            f"**Fix.** {rule.fix}",
            "",
        ]
        auto = _AUTOFIX.get(rule.code)
        if auto is not None:
            lines += [
                f"**Auto-fixable** with `mpsready migrate`. {auto.summary}",
                "",
                "Before:",
                "",
                "```python",
                auto.before.rstrip(),
                "```",
                "",
                "After:",
                "",
                "```python",
                auto.after.rstrip(),
                "```",
                "",
            ]
        lines += [
            f"**Source.** {rule.source}",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    # Run as a script this module is "__main__", whose registry the stage rule modules never fill:
    # render from the imported mpsready.rules instead.
    from mpsready import rules as _rules

    print(_rules.render_markdown(), end="")

"""``mpsready rules``: list every rule with its code and explanation."""

from __future__ import annotations

import argparse
import json

from mpsready import rules
from mpsready.errors import UsageError
from mpsready.commands.rules import register  # noqa: F401  (the arguments: cheap to import)


def _auto(code: str) -> str | None:
    """How `mpsready migrate` fixes the rule (None: it does not)."""
    fix = rules.autofix_of(code)
    return fix.summary if fix else None


def run(args: argparse.Namespace) -> int:
    selected = rules.all_rules()
    if args.codes:
        patterns = [c.strip().upper() for c in args.codes]
        codes = [r.code for r in selected]
        unknown = [p for p in patterns if not rules.select(codes, [p])]
        if unknown:  # an empty table with exit 0 reads as "no such rule exists" only by accident
            raise UsageError(f"no rule matches {', '.join(map(repr, unknown))} (see `mpsready rules` for the codes)")
        keep = set(rules.select(codes, patterns))
        selected = [r for r in selected if r.code in keep]
    if args.format == "md":
        print(rules.render_markdown(), end="")
    elif args.format == "json":
        print(json.dumps([r.__dict__ | {"severity": r.severity.value, "auto_fix": _auto(r.code)} for r in selected],
                         indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title="mpsready rules")
        for col in ("code", "name", "severity", "auto-fix", "summary"):
            table.add_column(col)
        for r in selected:
            table.add_row(r.code, r.name, r.severity.value, "migrate" if _auto(r.code) else "-", r.summary)
        Console().print(table)
    return 0

"""The unified diff of a plan (what ``git apply`` and ``patch -p1`` read) and a short summary for people."""

from __future__ import annotations

import difflib

from mpsready.migrate.engine import Plan


def render_diff(plan: Plan) -> str:
    """One ``--- a/PATH`` / ``+++ b/PATH`` section per changed file, in path order."""
    out: list[str] = []
    for fp in sorted(plan.files, key=lambda f: f.path):
        before = fp.before.splitlines(keepends=True)
        after = fp.after.splitlines(keepends=True)
        for line in difflib.unified_diff(before, after, f"a/{fp.path}", f"b/{fp.path}"):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def render_summary(plan: Plan, *, applied: list[str] | None = None, refused: list[str] | None = None) -> str:
    """Edits by rule, edits that change what a Mac runs (``review``), manual leftovers with their reasons, files not parsed, files written or refused."""
    lines: list[str] = []
    counts: dict[str, int] = {}
    for fp in plan.files:
        for e in fp.edits:
            counts[e.code] = counts.get(e.code, 0) + 1
    floor = ".".join(map(str, plan.torch_floor)) if plan.torch_floor else "not declared"
    lines.append(f"mpsready migrate: {plan.edits} edits in {len(plan.files)} files "
                 f"({', '.join(f'{c} {n}' for c, n in sorted(counts.items())) or 'none'}) fixing {len(plan.fixed)} "
                 "scan finding(s); "
                 f"{len(plan.manual)} manual, {len(plan.kept)} left as they are; PyTorch floor {floor}")
    for fp in sorted(plan.files, key=lambda f: f.path):
        for e in fp.edits:
            if e.review:
                cell = f" cell {e.cell}" if e.cell is not None else ""
                lines.append(f"  review {e.code} {fp.path}{cell}:{e.line}: {e.review}")
    for m in plan.manual:
        where = f"{m.path}:{m.line}" if m.line else (m.path or "-")
        lines.append(f"  manual {m.code} {where}: {m.reason}")
    for e in plan.errors:
        lines.append(f"  not parsed: {e}")
    if applied is not None:
        lines.append(f"written: {len(applied)} files" + (": " + ", ".join(applied) if applied else ""))
    for r in refused or []:
        lines.append(f"refused: {r}")
    if applied is None and plan.files:
        lines.append("nothing written (review the diff, then run again with --apply)")
    return "\n".join(lines) + "\n"

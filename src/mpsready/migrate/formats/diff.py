"""The unified diff of a plan (what ``git apply`` and ``patch -p1`` read) and a short summary for people."""

from __future__ import annotations

import difflib

from mpsready.migrate.engine import Plan

_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"}


def git_path(prefix: str, path: str) -> str:
    """``prefix + path`` for a ``---``/``+++`` line, as git writes it (git quote.c ``quote_c_style`` with the
    default ``core.quotePath``): a name holding a control character, ``"``, ``\\`` or a non-ASCII byte is
    put in double quotes with C escapes (``\\n``, ``\\"``, octal ``\\303\\251`` per UTF-8 byte); a name holding a
    space ends with a tab, so ``git apply`` and ``patch`` know where it ends."""
    name = prefix + path
    raw = name.encode("utf-8", "surrogateescape")
    if not any(b < 0x20 or b >= 0x7F or b in (34, 92) for b in raw):
        return name + ("\t" if " " in name else "")
    return '"' + "".join(_ESCAPES.get(b) or (f"\\{b:03o}" if b < 0x20 or b >= 0x7F else chr(b)) for b in raw) + '"'


def render_diff(plan: Plan) -> str:
    """One ``--- a/PATH`` / ``+++ b/PATH`` section per changed file, in path order (paths quoted as git
    quotes them: :func:`git_path`)."""
    out: list[str] = []
    for fp in sorted(plan.files, key=lambda f: f.path):
        before, after = _lines(fp.before), _lines(fp.after)
        lines = difflib.unified_diff(before, after, "a", "b", lineterm="\n")
        for k, line in enumerate(lines):
            if k < 2:  # the headers: difflib writes names as they are
                line = f"{line[:4]}{git_path(line[4] + '/', fp.path)}\n"
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _cell_sources(text: str) -> dict[int, str] | None:
    """The source of each cell of a notebook's text (1-based, every cell counted), ``None`` when it is not one."""
    import json

    from mpsready.scan.sources.interface import json_int

    try:
        doc = json.loads(text, parse_int=json_int)
    except (ValueError, RecursionError):
        return None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        return None
    out = {}
    for i, cell in enumerate(cells, 1):
        src = cell.get("source", "") if isinstance(cell, dict) else ""
        out[i] = "".join(src) if isinstance(src, list) and all(isinstance(e, str) for e in src) else \
            src if isinstance(src, str) else ""
    return out


def render_cells(plan: Plan) -> str:
    """For each edited notebook, the Python diff of each edited cell, headed ``a/PATH:cell N``: what a notebook
    user reviews (the diff on stdout is of the notebook's JSON, which ``git apply`` needs and nobody reads)."""
    out: list[str] = []
    for fp in sorted(plan.files, key=lambda f: f.path):
        if not fp.path.endswith(".ipynb"):
            continue
        before, after = _cell_sources(fp.before), _cell_sources(fp.after)
        if before is None or after is None:
            continue
        for i in sorted(after):
            if before.get(i, "") == after[i]:
                continue
            lines = difflib.unified_diff(_lines(before.get(i, "")), _lines(after[i]), f"a/{fp.path}:cell {i}",
                                         f"b/{fp.path}:cell {i}", lineterm="\n")
            out += [line if line.endswith("\n") else line + "\n" for line in lines]
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines as ``git diff`` sees them: split at ``\\n`` only (``str.splitlines`` also splits at form feeds
    and other separators Python source may hold, which would put a "No newline" marker mid-file)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _count(n: int, noun: str) -> str:
    """``1 edit``, ``2 edits``, ``0 files`` (h40c: the summary said "1 edits in 1 files")."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _entries(n: int, findings: int, what: str) -> str:
    """``4 manual entries (2 code findings)``: the plan's entries, and, where they differ, the code findings among
    them that the effort line below counts (h40c: "4 manual" next to the effort line's "2 manual" read as a
    contradiction; a notebook cell or an INP entry, or two notes on one line, are entries but no extra finding)."""
    text = f"{n} {what} entr{'y' if n == 1 else 'ies'}" if what == "manual" else f"{n} {what}"
    return text + (f" ({_count(findings, 'code finding')})" if findings != n else "")


def render_summary(plan: Plan, *, applied: list[str] | None = None, refused: list[str] | None = None,
                   removed: list[str] | None = None, leftovers_kept: list[str] | None = None) -> str:
    """Edits by rule, edits that change what a Mac runs (``review``), manual leftovers with their reasons, files
    not parsed, temp files of an earlier killed ``--apply`` (found, or ``removed``/``leftovers_kept`` by this
    one), files written or refused."""
    lines: list[str] = []
    counts: dict[str, int] = {}
    for fp in plan.files:
        for e in fp.edits:
            counts[e.code] = counts.get(e.code, 0) + 1
    floor = ".".join(map(str, plan.torch_floor)) if plan.torch_floor else "not declared"
    from mpsready.migrate.fixability import plan_effort, render_effort

    effort = plan_effort(plan.fixed, plan.manual, plan.kept)
    lines.append(f"mpsready migrate: {_count(plan.edits, 'edit')} in {_count(len(plan.files), 'file')} "
                 f"({', '.join(f'{c} {n}' for c, n in sorted(counts.items())) or 'none'}) fixing {len(plan.fixed)} "
                 "scan finding(s); "
                 f"{_entries(len(plan.manual), effort['manual'], 'manual')}, "
                 f"{_entries(len(plan.kept), effort['kept'], 'left as they are')}; PyTorch floor {floor}")
    # the sentence scan and report print as an estimate, here from the plan itself (one computation of the four)
    lines.append("  " + render_effort(effort, "plan"))
    if plan.rounds > 2:  # a later round edited what only the first round's edits made visible
        lines.append(f"  fixed point: {plan.rounds} rounds, each planned on the edits of the one before (in memory); "
                     "the last changed nothing, so a second run changes nothing")
    for fp in sorted(plan.files, key=lambda f: f.path):
        for e in fp.edits:
            if e.review:
                where = f"{fp.path}:cell {e.cell}:line {e.line}" if e.cell is not None else f"{fp.path}:{e.line}"
                lines.append(f"  review {e.code} {where}: {e.review}")
    for m in plan.manual:
        where = f"{m.path}:{m.line}" if m.line else (m.path or "-")
        reason = m.reason
        cell = reason.split(":", 1)[0] if (m.path or "").endswith(".ipynb") and reason.startswith("cell ") else None
        if cell is not None and cell[5:].isdigit():  # a notebook's entry: its cell and the line in that cell
            where = f"{m.path}:{cell}" + (f":line {m.line}" if m.line else "")
            reason = reason.split(": ", 1)[1]
        lines.append(f"  manual {m.code} {where}: {reason}")
    for err in plan.errors:
        lines.append(f"  not parsed: {err}")
    if applied is None:
        for t in plan.leftovers:
            lines.append(f"  leftover: {t}: temp file of an interrupted --apply (the original is intact); "
                         "the next --apply removes it")
    for t in removed or []:
        lines.append(f"removed leftover: {t}")
    for t in leftovers_kept or []:
        lines.append(f"leftover: {t}")
    if applied is not None:
        lines.append(f"written: {_count(len(applied), 'file')}" + (": " + ", ".join(applied) if applied else ""))
    for r in refused or []:
        lines.append(f"refused: {r}")
    if applied is None and plan.files:
        lines.append("nothing written (review the diff, then run again with --apply)")
    from mpsready.escape import visible

    return "\n".join(visible(line) for line in lines) + "\n"  # file names: no control or bidi character raw

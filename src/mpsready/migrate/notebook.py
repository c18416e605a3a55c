"""Notebooks: migrate code cells one by one, keep outputs, metadata and every other cell as they are.

IPython magics and shell escapes (``%matplotlib``, ``!pip``) are not Python: they are swapped for
placeholder comments while libcst rewrites the cell, then put back. A cell that starts with a cell
magic (``%%bash``) is not Python at all and is left alone. The device helper, when some cell needs
it, is added once, to the first code cell (cells run top to bottom).
"""

from __future__ import annotations

import dataclasses
import json

from mpsready.findings import Finding, Location
from mpsready.migrate.helper import add_requirements
from mpsready.migrate.interface import Manual, MigrateError, Transform
from mpsready.migrate.source import context, migrate_source

_PLACEHOLDER = "# mpsready-migrate-magic-{}"


def _is_magic(line: str) -> bool:
    s = line.lstrip()
    return s.startswith(("!", "%", "?")) or (s.endswith("?") and s[:-1].isidentifier())


def _mask(source: str) -> tuple[str, dict[str, str]]:
    saved: dict[str, str] = {}
    out = []
    for line in source.split("\n"):
        if _is_magic(line):
            key = _PLACEHOLDER.format(len(saved))
            saved[key] = line.strip()
            out.append(line[: len(line) - len(line.lstrip())] + key)
        else:
            out.append(line)
    return "\n".join(out), saved


def _unmask(source: str, saved: dict[str, str]) -> str:
    for key, line in saved.items():
        source = source.replace(key, line)
    return source


def _text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _store(cell: dict, text: str) -> None:
    cell["source"] = text.splitlines(keepends=True) if isinstance(cell.get("source"), list) else text


def _indent_of(text: str) -> int:
    lines = text.split("\n", 2)
    return len(lines[1]) - len(lines[1].lstrip(" ")) if len(lines) > 1 and lines[1].strip() else 1


def migrate_notebook(text: str, path: str, findings: list[Finding], transforms: list[Transform],
                     torch_floor: tuple[int, int] | None, selections: tuple[str, ...] = ()):
    """``(new_text, edit_records, manual, handled_findings, fixed_findings)`` for one nbformat-4 notebook; raises
    :class:`MigrateError` for a notebook that is not JSON with a ``cells`` list."""
    from mpsready.migrate.engine import EditRecord

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MigrateError(f"{path}: not JSON ({exc.msg})") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise MigrateError(f"{path}: no 'cells' list (not nbformat 4)")
    records: list[EditRecord] = []
    manual: list[Manual] = []
    handled: list[Finding] = []
    fixed: list[Finding] = []
    needs_helper = False
    first_code: int | None = None
    for i, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _text(cell)
        if source.lstrip().startswith("%%"):
            manual += [Manual(f.code, (f.evidence or {}).get("cell_line"), f"cell {i} starts with a cell magic "
                              f"({source.split()[0]}): not Python, left as it is", f, kept=True)
                       for f in findings if (f.evidence or {}).get("cell") == i]
            continue
        first_code = first_code or i
        mine = [dataclasses.replace(f, location=Location(path, (f.evidence or {}).get("cell_line"), f.location.column))
                for f in findings if (f.evidence or {}).get("cell") == i]
        masked, saved = _mask(source)
        try:
            res = migrate_source(masked, f"{path} cell {i}", mine, transforms, torch_floor=torch_floor, add_helper=False,
                                 selections=selections)
        except MigrateError as exc:
            manual.append(Manual("INP", None, f"cell {i} left as it is: {exc}"))
            continue
        originals = {id(m): f for m, f in zip(mine, [f for f in findings if (f.evidence or {}).get("cell") == i])}
        done = [originals[id(f)] for e in res.edits for f in e.resolves() if id(f) in originals]
        handled += done
        fixed += done
        handled += [originals[id(m.finding)] for m in res.manual if m.finding is not None and id(m.finding) in originals]
        manual += [dataclasses.replace(m, reason=f"cell {i}: {m.reason}") for m in res.manual]
        records += [EditRecord(e.code, e.line, e.what, cell=i, review=e.review, needs_torch=e.needs_torch) for e in res.edits]
        needs_helper = needs_helper or res.needs_helper
        if res.edits:
            _store(cell, _unmask(res.text, saved))
    if records and first_code is not None:
        cell = cells[first_code - 1]
        masked, saved = _mask(_text(cell))
        module = context(masked, path, torch_floor).module
        module = add_requirements(module, helper=needs_helper, torch=True, accelerator=torch_floor is not None
                                  and torch_floor >= (2, 6))
        _store(cell, _unmask(module.code, saved))
    if not records:
        return text, records, manual, handled, fixed
    out = json.dumps(doc, indent=_indent_of(text), ensure_ascii=False)
    return out + ("\n" if text.endswith("\n") else ""), records, manual, handled, fixed

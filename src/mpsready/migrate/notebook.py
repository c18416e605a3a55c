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
from mpsready.migrate.nbsplice import source_spans, splice
from mpsready.migrate.source import context, migrate_source
from mpsready.scan.sources.interface import json_int

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


def _text(cell: dict) -> str | None:
    """The cell's source text; ``None`` when it is not text (a list holding a number, a dict)."""
    src = cell.get("source", "")
    if isinstance(src, list):
        return "".join(src) if all(isinstance(e, str) for e in src) else None
    return src if isinstance(src, str) else None


def migrate_notebook(text: str, path: str, findings: list[Finding], transforms: list[Transform],
                     torch_floor: tuple[int, int] | None, selections: tuple[str, ...] = ()):
    """``(new_text, edit_records, manual, handled_findings, fixed_findings)`` for one nbformat-4 notebook; raises
    :class:`MigrateError` for a notebook that is not JSON with a ``cells`` list, or JSON nested too deeply to
    read. Only the ``source`` of edited cells changes in ``new_text`` (:mod:`mpsready.migrate.nbsplice`): the
    rest (indentation, separators, key order, a 5,000-digit ``execution_count``) comes back byte for byte. A
    cell whose source is not text (a list holding a number) is left as it is and listed."""
    from mpsready.migrate.engine import EditRecord

    try:
        doc = json.loads(text, parse_int=json_int)  # int() refuses more than 4,300 digits
    except json.JSONDecodeError as exc:
        raise MigrateError(f"{path}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise MigrateError(f"{path}: JSON nested too deeply to read") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise MigrateError(f"{path}: no 'cells' list (not nbformat 4)")
    records: list[EditRecord] = []
    manual: list[Manual] = []
    handled: list[Finding] = []
    fixed: list[Finding] = []
    needs_helper = False
    first_code: int | None = None
    new_sources: dict[int, str] = {}
    for i, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _text(cell)
        if source is None:
            manual.append(Manual("INP", None, f"cell {i} left as it is: its source is not text"))
            continue
        if source.lstrip().startswith("%%"):
            manual += [Manual(f.code, (f.evidence or {}).get("cell_line"), f"cell {i} starts with a cell magic "
                              f"({source.split()[0]}): not Python, left as it is", f, kept=True)
                       for f in findings if (f.evidence or {}).get("cell") == i]
            continue
        mine = [dataclasses.replace(f, location=Location(path, (f.evidence or {}).get("cell_line"), f.location.column))
                for f in findings if (f.evidence or {}).get("cell") == i]
        masked, saved = _mask(source)
        try:
            res = migrate_source(masked, f"{path} cell {i}", mine, transforms, torch_floor=torch_floor, add_helper=False,
                                 selections=selections)
        except MigrateError as exc:
            manual.append(Manual("INP", None, f"cell {i} left as it is: {exc}"))
            continue
        first_code = first_code or i  # the helper goes to the first code cell that parses
        originals = {id(m): f for m, f in zip(mine, [f for f in findings if (f.evidence or {}).get("cell") == i])}
        done = [originals[id(f)] for e in res.edits for f in e.resolves() if id(f) in originals]
        handled += done
        fixed += done
        handled += [originals[id(m.finding)] for m in res.manual if m.finding is not None and id(m.finding) in originals]
        manual += [dataclasses.replace(m, reason=f"cell {i}: {m.reason}") for m in res.manual]
        records += [EditRecord(e.code, e.line, e.what, cell=i, review=e.review, needs_torch=e.needs_torch) for e in res.edits]
        needs_helper = needs_helper or res.needs_helper
        if res.edits:
            new_sources[i] = _unmask(res.text, saved)
    if records and first_code is not None:
        masked, saved = _mask(new_sources.get(first_code, _text(cells[first_code - 1]) or ""))
        module = context(masked, path, torch_floor).module
        module = add_requirements(module, helper=needs_helper, torch=True, accelerator=torch_floor is not None
                                  and torch_floor >= (2, 6))
        new_sources[first_code] = _unmask(module.code, saved)
    if not records:
        return text, records, manual, handled, fixed
    spans = source_spans(text)
    if any(i not in spans for i in new_sources):  # a source key json.loads saw that the splice did not find
        raise MigrateError(f"{path}: a cell's source could not be located in the file; left as it is")
    return splice(text, spans, new_sources), records, manual, handled, fixed

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

# ended by "." so that no key is a prefix of another (key 1 of key 10: a cell with 11 magics got key 1's line put
# back inside key 10's place)
_PLACEHOLDER = "# mpsready-migrate-magic-{}."


def _is_magic(line: str) -> bool:
    """A line magic, a shell escape or IPython's help: ``x?``, ``torch.nn.Module??``, ``torch.*Tensor?`` (a dotted name,
    ``*`` wildcards allowed; pytorch-Deep-Learning's tensor tutorial: those cells were listed as unparsable)."""
    s = line.strip()
    if s.startswith(("!", "%", "?")):
        return True
    name = s.rstrip("?")
    return s.endswith("?") and len(s) - len(name) <= 2 and bool(name) and all(
        part.replace("*", "x").isidentifier() for part in name.split("."))


def _mask(source: str) -> tuple[str, dict[str, str]]:
    saved: dict[str, str] = {}
    out = []
    for line in source.split("\n"):
        if _is_magic(line):
            key = _PLACEHOLDER.format(len(saved))
            saved[key] = line.lstrip()  # its trailing spaces (and a CRLF file's "\r") come back as they were
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
    whole = _as_one_program(cells, path, findings, transforms, torch_floor, selections)
    if whole is not None:
        records, manual, handled, fixed, needs_helper, first_code, new_sources, done_cells = whole
    else:
        done_cells = set()
    for i, cell in enumerate(cells, 1):
        if i in done_cells:
            continue
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


_BOUNDARY = "# mpsready-migrate-cell-boundary-7f3a9c "


def _as_one_program(cells: list, path: str, findings: list[Finding], transforms: list[Transform],
                    torch_floor: tuple[int, int] | None, selections: tuple[str, ...]):
    """The notebook's code cells planned as one program, in cell order (a kernel runs them so): a CUDA switch
    set in one cell and read in another (``train_on_gpu = torch.cuda.is_available()``, then ``if train_on_gpu:
    model.cuda()`` cells later, the teaching idiom) is migrated as in a ``.py`` file. The cells Python parses
    (magics masked) are joined with a boundary comment line before each and split again after the rewrite;
    the others are left to the per-cell pass, which lists them. ``None`` when that cannot be done exactly (libcst
    refuses the whole, or a boundary does not come back): the caller then plans cell by cell."""
    from mpsready.migrate.engine import EditRecord

    join = _join(cells, path)
    if join is None:
        return None
    joined, starts, masks = join
    mine = []
    originals: dict[int, Finding] = {}
    for f in findings:
        ev = f.evidence or {}
        cell, cell_line = ev.get("cell"), ev.get("cell_line")
        if cell in starts and isinstance(cell_line, int):
            moved = dataclasses.replace(f, location=Location(path, starts[cell] + cell_line - 1, f.location.column))
            originals[id(moved)] = f
            mine.append(moved)
    try:
        res = migrate_source(joined, path, mine, transforms, torch_floor=torch_floor, add_helper=False,
                             selections=selections)
    except MigrateError:
        return None
    pieces = res.text.split(_BOUNDARY)
    if pieces[0] != "" or len(pieces) != len(masks) + 1:
        return None
    order = sorted(starts, key=lambda c: starts[c])
    new_sources: dict[int, str] = {}
    for i, piece in zip(order, pieces[1:]):
        head, _, body = piece.partition("\n")
        if head != str(i):
            return None
        masked, saved, newline = masks[i]
        if not newline:
            if not body.endswith("\n"):
                return None
            body = body[:-1]
        if body != masked:
            new_sources[i] = _unmask(body, saved)

    def where(joined_line: int | None) -> tuple[int | None, int | None]:
        if joined_line is None:
            return None, None
        cell = max((c for c in order if starts[c] <= joined_line), key=lambda c: starts[c], default=None)
        return cell, (joined_line - starts[cell] + 1) if cell is not None else None

    records: list = []
    for e in res.edits:
        cell, cell_line = where(e.line)
        records.append(EditRecord(e.code, cell_line or e.line, e.what, cell=cell, review=e.review,
                                  needs_torch=e.needs_torch))
    manual = []
    for m in res.manual:
        cell, cell_line = where(m.line)
        finding = originals.get(id(m.finding)) if m.finding is not None else None
        manual.append(dataclasses.replace(m, line=cell_line, finding=finding,
                                          reason=f"cell {cell}: {m.reason}" if cell is not None else m.reason))
    done = [originals[id(f)] for e in res.edits for f in e.resolves() if id(f) in originals]
    handled = done + [originals[id(m.finding)] for m in res.manual if m.finding is not None and id(m.finding) in originals]
    first_code = order[0] if res.edits else None
    return records, manual, handled, list(done), res.needs_helper, first_code, new_sources, set(masks)


def _join(cells: list, path: str) -> tuple[str, dict[int, int], dict[int, tuple[str, dict[str, str], bool]]] | None:
    """(the code cells Python parses, magics masked, joined with a boundary line before each; each cell's first
    line in the joined text; each cell's masked text, magics and whether it ended with a newline), or ``None``
    with fewer than two such cells."""
    parts: list[str] = []
    starts: dict[int, int] = {}  # cell -> joined line of its first line
    masks: dict[int, tuple[str, dict[str, str], bool]] = {}
    line = 1
    for i, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _text(cell)
        if source is None or source.lstrip().startswith("%%"):
            continue
        masked, saved = _mask(source)
        try:
            compile(masked, f"{path} cell {i}", "exec", flags=0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            continue
        if _BOUNDARY in masked:
            return None
        newline = masked.endswith("\n")
        body = masked if newline else masked + "\n"
        parts.append(f"{_BOUNDARY}{i}\n{body}")
        starts[i] = line + 1
        masks[i] = (masked, saved, newline)
        line += 1 + body.count("\n")
    if len(masks) < 2:
        return None
    return "".join(parts), starts, masks

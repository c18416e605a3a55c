"""Jupyter notebooks (nbformat 4): ``!pip``/``%pip``/``%conda`` install lines and code cells.

Code cells are handed to the Python analysis with IPython magics blanked out (line numbers kept).
A finding's line is the line of the notebook *file* that holds that source line (each source line is
one JSON string, one per file line in notebooks saved by Jupyter), and its evidence carries ``cell``
(1-based index among all cells) and ``cell_line`` (the line within the cell).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.shell import scan_command_line


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based among all cells
    source: str  # the cell's text
    file_lines: tuple[int, ...] = ()  # notebook-file line of each cell line (empty when not found)

    def file_line(self, cell_line: int) -> int:
        """The notebook-file line of a 1-based cell line (the cell line itself when unmapped)."""
        if 0 < cell_line <= len(self.file_lines):
            return self.file_lines[cell_line - 1]
        return cell_line


def _file_lines(raw: list[str], start: int, elems: list[str]) -> tuple[tuple[int, ...], int]:
    """Map source elements (JSON strings) to the file lines that hold them; returns (map, next start)."""
    out: list[int] = []
    pos = start
    one_line = len(raw) <= 1
    for e in elems:
        encodings = {json.dumps(e), json.dumps(e, ensure_ascii=False)}
        found = next((k for k in range(pos, len(raw)) if any(enc in raw[k] for enc in encodings)), None)
        if found is None:
            return (), start
        pos = found if one_line else found + 1
        n = e.count("\n") + (0 if e.endswith("\n") else 1)
        out += [found + 1] * max(n, 1)
    return tuple(out), pos


class NotebookError(ValueError):
    """Not a readable notebook; the message says why."""


def code_cells(text: str, skipped: list[str] | None = None) -> list[Cell]:
    """The code cells of a notebook; raises :class:`NotebookError` for odd JSON, and for an odd cell
    shape unless ``skipped`` is given: then the odd cell is left out, the reason appended to ``skipped``,
    and the other cells still returned (one broken cell does not hide the rest of the notebook)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise NotebookError("JSON nested too deeply to read") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if cells is None and isinstance(doc, dict) and isinstance(doc.get("worksheets"), list):  # nbformat 3
        cells = [c for ws in doc["worksheets"] if isinstance(ws, dict) for c in ws.get("cells") or []]
    if not isinstance(cells, list):
        raise NotebookError("no 'cells' list (not nbformat 4)")
    out = []
    raw = text.splitlines()
    pos = 0
    for i, cell in enumerate(cells, 1):
        src = cell.get("source", cell.get("input", "")) if isinstance(cell, dict) else None
        elems = src if isinstance(src, list) else [src]
        problem = ("is not an object" if not isinstance(cell, dict)
                   else None if all(isinstance(e, str) for e in elems) else "source is not text")
        if problem:
            if skipped is None:
                raise NotebookError(f"cell {i} {problem}")
            skipped.append(f"cell {i} {problem}")
            continue
        lines, pos = _file_lines(raw, pos, [e for e in elems if e])
        if cell.get("cell_type") == "code":
            out.append(Cell(i, "".join(elems), lines))
    return out


def python_of(cell_source: str) -> str:
    """Cell text with IPython magics and shell escapes blanked so ``ast`` can parse it (lines kept)."""
    lines = []
    for line in cell_source.split("\n"):
        stripped = line.lstrip()
        lines.append("" if stripped.startswith(("!", "%", "?")) or stripped.endswith("?") and stripped[:-1].isidentifier() else line)
    return "\n".join(lines)


class NotebookSource(DependencySource):
    name = "notebook"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).suffix == ".ipynb"

    def collect(self, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
        result = SourceResult()
        skipped: list[str] = []
        try:
            cells = code_cells(text, skipped)
        except NotebookError as exc:
            result.findings.append(RawFinding(I.BAD_NOTEBOOK, relpath, None, f"notebook not read: {exc}"))
            return result
        for why in skipped:
            result.findings.append(RawFinding(I.BAD_NOTEBOOK, relpath, None, f"{why}; that cell not read"))
        for cell in cells:
            for n, line in enumerate(cell.source.split("\n"), 1):
                stripped = line.strip()
                if stripped.startswith(("!", "%pip", "%conda")):
                    before = len(result.dependencies), len(result.findings)
                    scan_command_line(result, stripped.lstrip("!%"), relpath, cell.file_line(n))
                    for j in range(before[0], len(result.dependencies)):
                        dep = result.dependencies[j]
                        result.dependencies[j] = type(dep)(**{**dep.__dict__, "group": f"cell:{cell.index}"})
                    for j in range(before[1], len(result.findings)):
                        f = result.findings[j]
                        result.findings[j] = RawFinding(f.rule, f.path, f.line, f.message, f.severity, f.fix,
                                                        {**f.evidence, "cell": cell.index, "cell_line": n})
        return result

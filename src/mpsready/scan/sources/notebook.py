"""Jupyter notebooks (nbformat 4): ``!pip``/``%pip``/``%conda`` install lines, the install commands of shell
cells (``%%bash``, ``%%sh``, Colab's ``%%shell``, ``%%script bash``), and code cells.

Code cells are handed to the Python analysis with IPython magics blanked out (line numbers kept), all
code cells together as the one program the kernel runs; a cell whose cell magic is not Python (``%%bash``)
is not Python.
A finding's line is the line of the notebook *file* that holds that source line (each source line is
one JSON string, one per file line in notebooks saved by Jupyter), and its evidence carries ``cell``
(1-based index among all cells) and ``cell_line`` (the line within the cell).
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import line_guard
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceResult, json_int
from mpsready.scan.sources.shell import logical_shell_lines, scan_command_line


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


class _FileLines:
    """Where each source string sits in the notebook file, from one pass over the file's lines.

    Jupyter writes one JSON string per line (``"import torch\\n",``); the index maps each stripped line
    (trailing comma dropped) to its line numbers, so each look-up is a dictionary hit and a bisection,
    never a new search of the text. A notebook saved on one line holds every source line on line 1."""

    def __init__(self, text: str) -> None:
        self.one_line = "\n" not in text.rstrip("\n")
        self._at: dict[str, list[int]] = {}
        if self.one_line:
            return
        for n, raw in enumerate(text.split("\n"), 1):  # as json counts lines
            line = raw.strip()
            if line.endswith(","):
                line = line[:-1].rstrip()
            if line.startswith('"'):
                hits = self._at.setdefault(line, [])
                hits.append(n)

    def map(self, start: int, elems: list[str]) -> tuple[tuple[int, ...], int]:
        """Map source elements (JSON strings) to the 1-based file lines that hold them, searching at or after
        line ``start``; returns (map, next start), or ``((), start)`` when one is not found."""
        out: list[int] = []
        pos = start
        for e in elems:
            n = e.count("\n") + (0 if e.endswith("\n") else 1)
            if self.one_line:
                out += [1] * max(n, 1)
                continue
            found = None
            for enc in dict.fromkeys((json.dumps(e), json.dumps(e, ensure_ascii=False))):
                hits = self._at.get(enc)
                if hits:
                    i = bisect.bisect_left(hits, pos)
                    if i < len(hits) and (found is None or hits[i] < found):
                        found = hits[i]
            if found is None:
                return (), start
            pos = found + 1
            out += [found] * max(n, 1)
        return tuple(out), pos


class NotebookError(ValueError):
    """Not a readable notebook; the message says why."""


def code_cells(text: str, skipped: list[str] | None = None) -> list[Cell]:
    """The code cells of a notebook; raises :class:`NotebookError` for odd JSON, and for an odd cell
    shape unless ``skipped`` is given: then the odd cell is left out, the reason appended to ``skipped``,
    and the other cells still returned (one broken cell does not hide the rest of the notebook)."""
    try:
        doc = json.loads(text, parse_int=json_int)  # a 5,000-digit int would lose the whole file
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise NotebookError("JSON nested too deeply to read") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if cells is None and isinstance(doc, dict) and isinstance(doc.get("worksheets"), list):  # nbformat 3
        cells = []
        for w, ws in enumerate(doc["worksheets"], 1):
            ws_cells = ws.get("cells") if isinstance(ws, dict) else None
            if isinstance(ws_cells, list):
                cells += ws_cells
            elif skipped is None:
                raise NotebookError(f"worksheet {w} has no 'cells' list")
            else:
                skipped.append(f"worksheet {w} has no 'cells' list; that worksheet not read")
    if not isinstance(cells, list):
        raise NotebookError("no 'cells' list (not nbformat 4)")
    out = []
    index = _FileLines(text)
    pos = 1
    for i, cell in enumerate(cells, 1):
        src = cell.get("source", cell.get("input", "")) if isinstance(cell, dict) else None
        elems = src if isinstance(src, list) else [src]
        texts = [e for e in elems if isinstance(e, str)]
        problem = ("is not an object" if not isinstance(cell, dict)
                   else None if len(texts) == len(elems) else "source is not text")
        if problem:
            if skipped is None:
                raise NotebookError(f"cell {i} {problem}")
            skipped.append(f"cell {i} {problem}; that cell not read")
            continue
        lines, pos = index.map(pos, [e for e in texts if e])
        if cell.get("cell_type") == "code":
            out.append(Cell(i, "".join(texts), lines))
    return out


# IPython's built-in cell magics whose body is Python run in the kernel (IPython 8 docs, "Built-in magic
# commands": %%time, %%timeit, %%capture, %%prun, %%debug; %%python/%%python3 run it in a subprocess). Any other
# cell magic (%%bash, %%sh, %%script, %%writefile, %%html, %%javascript, %%cython, %%sql, ...) makes the
# cell's body another language or a file's content, so it is never analysed as the notebook's Python.
PYTHON_CELL_MAGICS = frozenset(("time", "timeit", "capture", "prun", "debug", "python", "python3"))
# cell magics whose body is a shell script (IPython 8 docs, "Built-in magic commands": %%bash, %%sh, %%script
# bash|sh; Google Colab's %%shell): their `pip install` lines install into the notebook's environment like `!pip`
SHELL_CELL_MAGICS = frozenset(("bash", "sh", "shell"))
SHELLS = frozenset(("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/env bash"))


def shell_cell_body(cell_source: str) -> tuple[int, str] | None:
    """For a shell cell, (1-based cell line of the body's first line, the body); ``None`` for any other cell."""
    lines = cell_source.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("%%"):
            return None
        words = stripped[2:].split()
        if not words:
            return None
        name, args = words[0], [w for w in words[1:] if not w.startswith("-")]
        if name in SHELL_CELL_MAGICS or name == "script" and args and args[0] in SHELLS:
            return i + 2, "\n".join(lines[i + 1:])
        return None
    return None


def cell_magic(cell_source: str) -> str | None:
    """The name of the cell magic on a cell's first non-blank line (``%%bash`` -> ``"bash"``), else ``None``."""
    for line in cell_source.split("\n"):
        stripped = line.strip()
        if stripped:
            if not stripped.startswith("%%"):
                return None
            return stripped[2:].split(None, 1)[0] if stripped[2:].strip() else ""
    return None


def python_of(cell_source: str) -> str:
    """Cell text with IPython magics and shell escapes blanked so ``ast`` can parse it (lines kept); a cell
    whose cell magic does not run Python (``%%bash``, see :data:`PYTHON_CELL_MAGICS`) is blanked whole.

    An indented magic (``    %load_ext tensorboard`` as the body of an ``if``) becomes ``pass`` at its
    indentation: a blank line would leave the block empty and the cell would not parse."""
    magic = cell_magic(cell_source)
    if magic is not None and magic not in PYTHON_CELL_MAGICS:
        return "\n" * cell_source.count("\n")
    lines = []
    for line in cell_source.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("!", "%", "?")) or stripped.endswith("?") and stripped[:-1].isidentifier():
            indent = line[:len(line) - len(stripped)]
            lines.append(indent + "pass" if indent else "")
        else:
            lines.append(line)
    return "\n".join(lines)


class NotebookSource(DependencySource):
    name = "notebook"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).suffix == ".ipynb"

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        skipped: list[str] = []
        try:
            cells = code_cells(text, skipped)
        except NotebookError as exc:
            result.findings.append(RawFinding(I.BAD_NOTEBOOK, relpath, None, f"notebook not read: {exc}"))
            return result
        for why in skipped:
            result.findings.append(RawFinding(I.BAD_NOTEBOOK, relpath, None, why))
        for cell in cells:
            shell = shell_cell_body(cell.source)
            if shell is not None:
                first, body = shell
                commands = [(first + k - 1, line) for k, line in logical_shell_lines(body)]
            else:
                commands = [(n, line.strip().lstrip("!%")) for n, line in enumerate(cell.source.split("\n"), 1)
                            if line.strip().startswith(("!", "%pip", "%conda"))]
            for n, command in commands:
                with line_guard(result, relpath, cell.file_line(n)):
                    before = len(result.dependencies), len(result.findings)
                    scan_command_line(result, command, relpath, cell.file_line(n))
                    for j in range(before[0], len(result.dependencies)):
                        dep = result.dependencies[j]
                        result.dependencies[j] = type(dep)(**{**dep.__dict__, "group": f"cell:{cell.index}"})
                    for j in range(before[1], len(result.findings)):
                        f = result.findings[j]
                        result.findings[j] = RawFinding(f.rule, f.path, f.line, f.message, f.severity, f.fix,
                                                        {**f.evidence, "cell": cell.index, "cell_line": n})
        return result

"""A notebook's code cells analysed as the one program the kernel runs.

Jupyter runs the cells in one namespace, so ``import torch`` in cell 1 binds ``torch`` in cell 3: the cells
are joined in order (IPython magics blanked, a non-Python cell magic such as ``%%bash`` blanked whole, see
:func:`mpsready.scan.sources.notebook.python_of`) and analysed once. A cell that does not parse on its own is
analysed alone (its INP105 finding) and left out of the program as blank lines; when the joined cells still
do not parse (a ``from __future__`` import in a later cell), every cell is analysed alone. Findings are moved
to notebook-file lines, with ``cell`` (1-based among all cells) and ``cell_line`` in their evidence; imports
keep their cell line, suppressions are keyed ``"cell:line"``.
"""

from __future__ import annotations

import ast
import dataclasses
import warnings
from collections.abc import Callable, Sequence

from mpsready.scan.code.analyzer import analyze_source
from mpsready.scan.code.result import CodeResult
from mpsready.scan.sources.notebook import Cell, python_of


def analyze_cells(cells: Sequence[Cell]) -> CodeResult:
    """Analyse a notebook's code cells (in notebook order) as one program; never raises on bad input."""
    merged = CodeResult()
    sources = [python_of(cell.source) for cell in cells]
    parts: list[str] = []
    owner: list[tuple[Cell, int]] = []  # program line - 1 -> (cell, cell line)
    alone: list[int] = []
    for k, (cell, src) in enumerate(zip(cells, sources)):
        n = src.count("\n") + 1
        if _parses(src):
            parts.append(src)
        else:
            alone.append(k)
            parts.append("\n" * (n - 1))  # keeps the lines of the cells after it
        owner += [(cell, line) for line in range(1, n + 1)]
    if not parts:
        return merged
    program = analyze_source("\n".join(parts))
    if program.parsed:
        for k in alone:
            _merge(merged, analyze_source(sources[k]), _in_cell(cells[k]))
        _merge(merged, program, lambda line: owner[line - 1] if 0 < line <= len(owner) else owner[0])
    else:
        for cell, src in zip(cells, sources):
            _merge(merged, analyze_source(src), _in_cell(cell))
    return merged


def _parses(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences, as in analyze_source
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _in_cell(cell: Cell) -> Callable[[int], tuple[Cell, int]]:
    """``where`` for an analysis of one cell alone: its lines are the cell's lines."""
    return lambda line: (cell, line)


def _merge(merged: CodeResult, res: CodeResult, where: Callable[[int], tuple[Cell, int]]) -> None:
    """Add one analysis to ``merged``; ``where(line)`` gives the (cell, cell line) of one of its lines."""
    for d in res.findings:
        cell, cell_line = where(d["line"])
        moved = {**d, "line": cell.file_line(cell_line),
                 "evidence": {**d["evidence"], "cell": cell.index, "cell_line": cell_line}}
        if "end_line" in d:
            end_cell, end_line = where(d["end_line"])
            moved["end_line"] = end_cell.file_line(end_line)
        merged.findings.append(moved)
    for entry in res.imports:
        merged.imports.append(dataclasses.replace(entry, line=where(entry.line)[1]))
    merged.extensions += res.extensions
    for line, codes in res.suppress.items():
        cell, cell_line = where(int(line))
        merged.suppress[f"{cell.index}:{cell_line}"] = codes

"""``mpsready run -- NOTEBOOK.ipynb``: a notebook's code cells run in order, as one program, on the emulated Mac.

Why a plain interpreter and not a Jupyter kernel (nbclient): the emulated Mac is installed in the process that
runs the program (:mod:`mpsready.run.child`: the patched ``torch``, the fallback and placement checks, the step
limit, the time limit, the result document). A kernel is a second process that mpsready would have to start with
the emulator installed inside it (a kernel spec or a startup file, and the result sent back over the kernel's
messages), and nbclient brings jupyter_client, pyzmq, tornado, traitlets and nbformat, plus ipykernel on the
machine under test, into an install that today needs none of them. So the code cells run here, in the same child
as a script: each cell compiled under the name ``PATH:cell N`` (its text registered with :mod:`linecache`, so a
traceback shows the line) and executed in one ``__main__`` namespace, in notebook order, with the working
directory set to the notebook's folder as Jupyter sets it. A failure is then located as ``nb.ipynb:cell N:line M``.

What a plain interpreter cannot run is refused before anything runs, with its place: IPython magics (``%time``,
``%load_ext``), shell escapes (``!pip install``), help (``x?``) and cell magics (``%%bash``). Only
``%matplotlib ...`` is set aside (the line is skipped and said so): it picks where figures are shown, which a run
without a display does not use, and it heads a large share of teaching notebooks.
"""

from __future__ import annotations

import linecache
import os
import sys
import types
from dataclasses import dataclass

from mpsready.errors import UsageError

# the magic set aside (IPython 8 docs, "Built-in magic commands": %matplotlib sets the figure backend only)
SET_ASIDE = ("%matplotlib",)


@dataclass(frozen=True)
class NotebookCell:
    """One code cell to run: its 1-based index among all cells and the Python it runs."""

    index: int
    source: str
    set_aside: tuple[int, ...] = ()  # cell lines skipped (%matplotlib)


def cell_name(path: str, index: int) -> str:
    """The file name a cell's code is compiled under: tracebacks and locations then read ``PATH:cell N``."""
    return f"{path}:cell {index}"


def _ipython_line(stripped: str) -> bool:
    """A magic, a shell escape or help: ``x?``, ``torch.nn.Module??``, ``torch.*Tensor?`` (a dotted name, ``*``
    wildcards allowed), as migrate's notebook reader sets them aside (mpsready.migrate.notebook)."""
    if stripped.startswith(("!", "%", "?")):
        return True
    name = stripped.rstrip("?")
    return stripped.endswith("?") and len(stripped) - len(name) <= 2 and bool(name) and all(
        part.replace("*", "x").isidentifier() for part in name.split("."))


def read_cells(path: str) -> list[NotebookCell]:
    """The code cells of the notebook at ``path``, in order; raises :class:`UsageError` for a file that is not a
    notebook and for IPython syntax a plain interpreter cannot run (naming the first place and how many)."""
    from mpsready.scan.sources.notebook import NotebookError, cell_magic, code_cells

    shown = os.path.basename(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
        cells = code_cells(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the notebook {shown}: {exc}") from None
    except NotebookError as exc:
        raise UsageError(f"{shown} is not a notebook mpsready can read: {exc}") from None
    out: list[NotebookCell] = []
    refused: list[str] = []
    for cell in cells:
        if cell_magic(cell.source) is not None:
            refused.append(f"{shown}:cell {cell.index}:line 1: a cell magic ({cell.source.strip().splitlines()[0]})")
            continue
        lines = cell.source.split("\n")
        try:
            compile(cell.source, cell_name(path, cell.index), "exec", dont_inherit=True)
            out.append(NotebookCell(cell.index, cell.source))
            continue
        except SyntaxError:
            pass  # IPython syntax, or the program's own error (raised when the cell runs, at its line)
        aside = []
        for n, line in enumerate(lines, 1):
            stripped = line.strip()
            if stripped.startswith(SET_ASIDE):
                aside.append(n)
            elif _ipython_line(stripped):
                refused.append(f"{shown}:cell {cell.index}:line {n}: {stripped[:60]}")
        kept = [("" if n in aside else line) for n, line in enumerate(lines, 1)]
        out.append(NotebookCell(cell.index, "\n".join(kept), tuple(aside)))
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise UsageError(f"{refused[0]}{more}: IPython syntax (a magic, a shell escape or help) that a plain Python "
                         "interpreter cannot run; mpsready run executes a notebook's code cells as Python. Remove "
                         "those lines (run shell steps such as pip installs beforehand), then run again")
    return out


def run_cells(path: str, argv: list[str]) -> None:
    """Run the code cells of the notebook at ``path`` in order in a fresh ``__main__`` (as a kernel runs them in
    its one namespace), from the notebook's folder; raises what a cell raises."""
    cells = read_cells(path)
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    saved_main, saved_argv = sys.modules.get("__main__"), sys.argv
    sys.modules["__main__"], sys.argv = main, list(argv)
    os.chdir(os.path.dirname(path) or ".")
    try:
        for cell in cells:
            for n in cell.set_aside:
                sys.stderr.write(f"mpsready run: {os.path.basename(path)}:cell {cell.index}:line {n}: %matplotlib "
                                 "set aside (where figures are shown; a run without a display does not use it)\n")
            name = cell_name(path, cell.index)
            linecache.cache[name] = (len(cell.source), None, cell.source.splitlines(True), name)
            exec(compile(cell.source, name, "exec", dont_inherit=True), main.__dict__)  # noqa: S102 (the user's run)
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        sys.argv = saved_argv

"""``migrate --verify -- nb.ipynb``: a notebook as the program that proves the plan.

The two CPU runs (the original and the migrated copy) execute the notebook's code cells in order, in one
``__main__`` namespace, from the notebook's folder, in a plain child interpreter: the way ``mpsready run nb.ipynb``
runs them (:func:`mpsready.run.notebook.run_cells`), so the CPU runs and the emulated Mac run execute the same
Python. The child is ``python -m mpsready.migrate.verify_notebook NOTEBOOK ARGS`` with the seeds, the step limit
and the parameter digest of :mod:`mpsready.migrate.verify` installed as for a script, so the CPU numbers are
compared the same way. IPython syntax a plain interpreter cannot run (``!pip``, ``%time``, ``x?``) is refused
before anything runs (a usage error naming the cell and line), as ``mpsready run`` refuses it; ``%matplotlib``
lines are set aside. The emulated Mac runs ``mpsready run -- NOTEBOOK`` itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PYTHONS = ("python", "python3")


def notebook_of(command: list[str]) -> tuple[str, list[str]] | None:
    """``(notebook, its arguments)`` when ``command`` runs a notebook (``nb.ipynb ARGS`` or ``python nb.ipynb
    ARGS``), else ``None``."""
    words = list(command)
    if words and (Path(words[0]).name in _PYTHONS or Path(words[0]).name == Path(sys.executable).name
                  or words[0] == sys.executable):
        words = words[1:]
    if words and words[0].endswith(".ipynb"):
        return words[0], words[1:]
    return None


def cpu_command(command: list[str]) -> list[str]:
    """The argv of a CPU run: the command itself, or for a notebook the child that runs its cells."""
    nb = notebook_of(command)
    if nb is None:
        return list(command)
    return [sys.executable, "-m", "mpsready.migrate.verify_notebook", nb[0], *nb[1]]


def check_notebook(folder: Path, command: list[str]) -> None:
    """Raises :class:`~mpsready.errors.UsageError` before any run for a notebook command whose notebook is missing,
    is not a notebook, or holds IPython syntax a plain interpreter cannot run (:func:`mpsready.run.notebook.read_cells`)."""
    from mpsready.errors import UsageError
    from mpsready.run.notebook import read_cells

    nb = notebook_of(command)
    if nb is None:
        return
    path = folder / nb[0]
    if not path.is_file():
        raise UsageError(f"--verify: notebook not found: {nb[0]} (relative to {folder})")
    read_cells(str(path))


def as_python(command: list[str]) -> list[str]:
    """``script.py ARGS`` runs as ``python script.py ARGS``, as ``mpsready run -- script.py`` runs it (h40b: the
    runs started ``script.py`` as a program, and migrate stopped with "cannot make the temporary copies")."""
    if command and command[0].endswith(".py") and Path(command[0]).name not in _PYTHONS:
        return ["python", *command]
    return list(command)


def check_program(folder: Path, command: list[str]) -> None:
    """Raises :class:`~mpsready.errors.UsageError` before any run when the command's first word is no program that
    can start from ``folder``: a name not on ``PATH``, or a path (``./run.sh``) that is not an executable file there.
    Python and notebooks are checked by :func:`check_script` and :func:`check_notebook`."""
    import shutil

    from mpsready.errors import UsageError

    if not command or notebook_of(command) is not None:
        return
    exe = command[0]
    if Path(exe).name in _PYTHONS or exe == sys.executable:
        return
    if os.sep in exe or (os.altsep and os.altsep in exe):
        path = folder / exe
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UsageError(f"--verify: cannot run {exe}: not an executable file (relative to {folder})")
    elif shutil.which(exe) is None:
        raise UsageError(f"--verify: cannot run {exe}: no such program on PATH")


def check_script(folder: Path, command: list[str]) -> None:
    """Raises :class:`~mpsready.errors.UsageError` before any run when ``command`` is ``python [FLAGS] SCRIPT ARGS``
    and SCRIPT is not a file of ``folder`` (the folder the runs start in): every run would only end on Python's
    "can't open file", as ``mpsready run`` refuses it (``script not found``). Other commands (``-m``, ``-c``,
    ``bash run.sh``, a notebook: :func:`check_notebook`) are not checked here."""
    from mpsready.errors import UsageError

    words = list(command)
    if not words or not (Path(words[0]).name in _PYTHONS or Path(words[0]).name == Path(sys.executable).name
                         or words[0] == sys.executable):
        return
    words = words[1:]
    while words and words[0].startswith("-"):
        flag = words.pop(0)
        if flag in ("-m", "-c", "-"):
            return
        if flag in ("-W", "-X") and words:
            words.pop(0)
    if words and not words[0].endswith(".ipynb") and not (folder / words[0]).is_file():
        raise UsageError(f"--verify: script not found: {words[0]} (relative to {folder})")


def selection_line(root: Path, notebook: Path) -> str | None:
    """The first device choice between CUDA and the CPU only (API104/API115) in the code cells of ``notebook`` (a path
    relative to ``root``), as ``nb.ipynb:cell N:line M``: why no tensor reaches MPS."""
    from mpsready.scan.code.analyzer import analyze_source
    from mpsready.scan.sources.notebook import NotebookError, code_cells

    try:
        cells = code_cells((root / notebook).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, NotebookError):
        return None
    for cell in cells:
        res = analyze_source(cell.source.encode())
        hits = sorted(int(x.get("line") or 0) for x in res.findings if x.get("code") in ("API104", "API115"))
        if hits:
            return f"{notebook.as_posix()}:cell {cell.index}:line {hits[0]}"
    return None


def main(argv: list[str] | None = None) -> None:
    """``python -m mpsready.migrate.verify_notebook NOTEBOOK ARGS``: the notebook's cells, as ``mpsready run`` runs
    them, with ``sys.argv`` ``[NOTEBOOK, *ARGS]``."""
    from mpsready.run.notebook import run_cells

    words = list(sys.argv[1:] if argv is None else argv)
    path = os.path.abspath(words[0])
    # the notebook's folder first on sys.path, as mpsready run puts it (childproc.enter_user_path) and as a kernel
    # started there finds its sibling modules: `-m` put the folder the command runs from there instead
    sys.path.insert(0, os.path.dirname(os.path.realpath(path)))
    run_cells(path, words)


if __name__ == "__main__":
    main()

"""Read the program after ``--``: ``python script.py ARGS``, ``python -m pkg.mod ARGS``, ``script.py ARGS``,
``notebook.ipynb`` (its code cells in order: :mod:`mpsready.run.notebook`) or
``pytest ARGS`` (run as ``python -m pytest ARGS``, with the pytest plugin attached: :mod:`mpsready.pytest_plugin`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mpsready.errors import UsageError

# interpreter flags that take no part in what runs (the child is always this mpsready's Python)
_FLAGS_NO_VALUE = frozenset({"-u", "-B", "-O", "-OO", "-s", "-S", "-E", "-I", "-q"})
_FLAGS_WITH_VALUE = frozenset({"-W", "-X"})
# console scripts run as their module: `mpsready run -- pytest ARGS` is `python -m pytest ARGS`
_PYTEST = frozenset({"pytest", "py.test"})


@dataclass(frozen=True)
class Program:
    """``kind`` ``script`` or ``notebook`` (``target`` a path) or ``module`` (``target`` a dotted name); ``argv`` is what the
    program sees as ``sys.argv``; ``root``: the directory whose files are the user's (the script's folder,
    or the working directory for ``-m``)."""

    kind: str
    target: str
    argv: tuple[str, ...]
    root: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "target": self.target, "argv": list(self.argv)}


def _is_python(word: str) -> bool:
    base = os.path.basename(word)
    if not base.startswith("python"):
        return False
    rest = base[len("python"):]
    return rest == "" or all(p.isdigit() for p in rest.split(".") if p) and rest.replace(".", "").isdigit()


def _refuse_xdist(args: list[str]) -> None:
    """pytest-xdist's ``-n N`` / ``--numprocesses N`` runs the tests in worker processes that the emulated Mac
    is not installed in (their failures would be missed): refused, as the pytest plugin refuses it; ``-n 0``
    (no workers) is allowed."""
    for i, a in enumerate(args):
        if a == "--":
            break
        value = None
        if a in ("-n", "--numprocesses"):
            value = args[i + 1] if i + 1 < len(args) else ""
        elif a.startswith("--numprocesses="):
            value = a.split("=", 1)[1]
        elif a.startswith("-n") and len(a) > 2 and not a.startswith("--"):
            value = a[2:]
        if value is not None and value.strip() != "0":
            shown = " ".join(args[i:i + 2]) if a in ("-n", "--numprocesses") else a
            raise UsageError(f"pytest-xdist's {shown} runs the tests in workers the emulated Mac is not installed in: "
                             "drop it (or give -n 0), or run `pytest --mps-emulate -n N`, whose workers each "
                             "emulate the Mac")


def parse_program(words: list[str], cwd: str | None = None) -> Program:
    """Raises :class:`~mpsready.errors.UsageError` for an empty command, ``-c``, or a missing script."""
    cwd = os.path.abspath(cwd or os.getcwd())
    words = list(words)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("give the program after --, e.g. mpsready run -- python train.py --epochs 1")
    if _is_python(words[0]):
        words = words[1:]
        while words and words[0].startswith("-") and words[0] != "-m":
            flag = words.pop(0)
            if flag in _FLAGS_WITH_VALUE:
                if not words:
                    raise UsageError(f"python {flag} needs a value")
                words.pop(0)
            elif flag == "-c":
                raise UsageError("python -c is not supported: put the code in a file")
            elif flag not in _FLAGS_NO_VALUE and not flag.startswith(("-W", "-X")):
                raise UsageError(f"python option {flag} is not supported by mpsready run")
        if not words:
            raise UsageError("no script or -m module after python")
        if words[0] == "-m":
            if len(words) < 2:
                raise UsageError("python -m needs a module name")
            mod = words[1]
            if not all(p.isidentifier() for p in mod.split(".")):
                raise UsageError(f"{mod!r} is not a module name")
            if mod == "pytest":
                _refuse_xdist(words[2:])
            _check_module(mod, cwd)
            return Program("module", mod, (mod, *words[2:]), cwd)
    if os.path.basename(words[0]) in _PYTEST:  # the pytest console script: the same as python -m pytest
        _refuse_xdist(words[1:])
        return Program("module", "pytest", ("pytest", *words[1:]), cwd)
    script = words[0]
    path = os.path.abspath(os.path.join(cwd, script))
    if not os.path.isfile(path):
        raise UsageError(f"script not found: {script}")
    _check_python_text(path, script)
    if path.endswith(".ipynb"):  # its code cells in order (mpsready.run.notebook); IPython syntax refused here
        from mpsready.run.notebook import read_cells

        read_cells(path)
        return Program("notebook", path, (script, *words[1:]), os.path.dirname(path))
    return Program("script", path, (script, *words[1:]), os.path.dirname(path))


def _check_module(mod: str, cwd: str) -> None:
    """A usage error when ``python -m MOD`` names a top-level module or package found neither in ``cwd`` (the
    child's ``sys.path[0]``) nor on this interpreter's path. Only the finders' search runs: nothing is imported
    (a dotted name's parent package would run its ``__init__`` under ``find_spec``, so only the first part is
    looked up here and the child reports the rest)."""
    import sys
    from importlib.machinery import PathFinder

    top = mod.split(".", 1)[0]
    if top in sys.builtin_module_names or PathFinder.find_spec(top, [cwd, *sys.path[1:]]) is not None:
        return
    raise UsageError(f"no module named {top!r} in {cwd} or this Python's path (python -m {mod})")


def _check_python_text(path: str, script: str) -> None:
    """A usage error for a file that is not Python source: a binary (a NUL byte in its first 8 KiB) or a script
    whose ``#!`` line names another interpreter (``#!/bin/bash``). Notebooks are JSON and read later."""
    if path.endswith(".ipynb"):
        return
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        raise UsageError(f"cannot read {script}: {exc.strerror}") from None
    if b"\0" in head:
        raise UsageError(f"{script} is not a Python script (a binary file): mpsready run runs Python programs, "
                         "e.g. mpsready run -- python train.py")
    first = head.split(b"\n", 1)[0]
    if first.startswith(b"#!") and b"python" not in first:
        interp = first[2:].decode("utf-8", "replace").strip()
        raise UsageError(f"{script} is a script for {interp!r}, not Python: run its Python command instead, "
                         "e.g. mpsready run -- python train.py")

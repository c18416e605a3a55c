"""A plain Python program in a job forked from the zygote (:mod:`mpsready.run.zygote`): ``migrate --verify``'s CPU
runs (issue 39), the original and the migrated copy, each as a fresh ``python SCRIPT ARGS`` or ``python -m MODULE
ARGS`` would run it with its ``PYTHONPATH`` (which holds ``--verify``'s ``sitecustomize``: the seeds, the step limit,
the parameter digest), without paying the interpreter's start and ``import torch`` again.

What a fresh interpreter gives the program, the job gives it (``tests/migrate/test_verify_zygote.py`` compares
both): the environment the parent asked for (the zygote sets it in the job: ``mpsready.run.zygote._job``), the
working folder, ``sys.path`` as Python builds it (the script's folder, symbolic links resolved, or the current
folder for ``-m``; the ``PYTHONPATH`` entries made absolute; then the interpreter's own entries, without the folder
mpsready's boot put first), the ``sitecustomize`` that ``PYTHONPATH`` holds run before the program's folder is on
the path (``site`` imports it during start-up, before ``sys.path[0]`` is added), ``__name__ == "__main__"`` and
``sys.argv`` (its first item the script's absolute path, as ``mpsready run`` gives it), the exit status (``SystemExit``'s
code; 1 and the traceback, from the program's first frame, on stderr for an uncaught exception), the program's
threads joined and its ``atexit`` handlers run at the end, no module teardown (``run.child.exit_quickly``).

What differs: the modules the zygote imported are imported already. Those a fresh run imports before the
program too (torch, NumPy and what ``sitecustomize`` imports) are the same objects either way; the few only
mpsready imports (PyYAML, ``packaging``: :func:`loaded`'s ``extra``) would be found in the program's folder by a
fresh run, so a folder holding a module of one of those names (``yaml.py``, ``packaging/``), or a ``PYTHONPATH``
entry holding any module the zygote imported, is run in a fresh interpreter instead (:func:`shadowed`, read by
the parent before it asks for a job). ``sys.orig_argv`` and ``sys.flags`` are the zygote's.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# what --verify's sitecustomize imports (mpsready.migrate.verify_runs.SITE): loaded before mpsready's own modules
SITE_MODULES = ("atexit", "hashlib", "json", "os", "random", "shutil", "signal", "threading", "time", "numpy",
                "torch", "torch.optim.optimizer")
NEVER_SHADOWED = frozenset({"mpsready", "__main__", "sitecustomize", "usercustomize"})

_state: dict[str, Any] = {"base_path": None, "before": set(), "extra": set()}


def _tops() -> set[str]:
    return {name.partition(".")[0] for name in list(sys.modules)}


def warm() -> None:
    """In the zygote, before anything else is imported: the interpreter's own ``sys.path`` (without the folder
    mpsready's boot put first: :func:`mpsready.childproc.command`) and :data:`SITE_MODULES`, then what is loaded."""
    import importlib

    from mpsready.childproc import package_root

    path = list(sys.path)
    _state["base_path"] = path[1:] if path and path[0] == package_root() else path
    for name in SITE_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a fresh run's sitecustomize goes on without it too
            pass
    _state["before"] = _tops()


def settle() -> None:
    """In the zygote once everything is loaded: the top-level modules only mpsready's own imports brought."""
    _state["extra"] = _tops() - _state["before"] - NEVER_SHADOWED


def loaded() -> dict[str, Any]:
    """What the zygote tells its parent: whether it can run plain jobs, the top-level modules it has imported
    (``preloaded``) and those of them only mpsready imported (``extra``)."""
    return {"plain": _state["base_path"] is not None, "preloaded": sorted(_tops() - NEVER_SHADOWED),
            "extra": sorted(_state["extra"])}


def shadowed(folders: list[str], names: set[str] | list[str]) -> str | None:
    """The first file in ``folders`` that would be imported as a module named in ``names`` (``name.py``,
    ``name.pyc``, an extension ``name.*.so``, a package ``name/__init__.py``), or ``None``. A namespace folder
    is not one: a regular module later on the path wins over it."""
    wanted = set(names)
    for folder in folders:
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            continue
        for entry in entries:
            name, dot, _rest = entry.partition(".")
            if name not in wanted:
                continue
            full = os.path.join(folder, entry)
            if (not dot and os.path.isfile(os.path.join(full, "__init__.py"))) or \
                    (dot and entry.endswith((".py", ".pyc", ".so", ".pyd")) and os.path.isfile(full)):
                return full
    return None


def run(spec: dict[str, Any]) -> int:
    """In the job: ``spec`` {``kind`` ``script`` (``target`` a path, relative to the working folder) or
    ``module`` (``target`` a dotted name), ``args``}. Ends the process with the program's exit status."""
    entries = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    # site.removeduppaths keeps the first of equal entries, and adds a .pth entry only once
    sys.path[:] = list(dict.fromkeys([*entries, *(_state["base_path"] or sys.path)]))
    _sitecustomize(entries)
    script = spec["kind"] == "script"
    first = os.path.dirname(os.path.realpath(spec["target"])) if script else os.getcwd()
    sys.path.insert(0, first)
    from mpsready.childproc import unshadow

    unshadow([first])
    code, interrupted = _main(spec, script)
    _finish(code, interrupted)
    return code  # pragma: no cover - _finish ends the process


def _sitecustomize(entries: list[str]) -> None:
    """The ``sitecustomize`` a ``PYTHONPATH`` entry holds, run as ``site`` runs it (an error in it is one line on
    stderr, and the program runs)."""
    import importlib
    import importlib.machinery

    if importlib.machinery.PathFinder.find_spec("sitecustomize", entries) is None:
        return
    sys.modules.pop("sitecustomize", None)
    try:
        importlib.import_module("sitecustomize")
    except Exception as err:  # noqa: BLE001 - site.execsitecustomize's own handling
        sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(err).__name__}: {err}\n")


def _main(spec: dict[str, Any], script: bool) -> tuple[int, bool]:
    import runpy

    sys.argv = [spec["target"], *spec.get("args", [])]
    try:
        if script:
            runpy.run_path(os.path.abspath(spec["target"]), run_name="__main__")
        else:
            runpy.run_module(spec["target"], run_name="__main__", alter_sys=True)
        return 0, False
    except SystemExit as exc:
        return _exit_status(exc.code), False
    except BaseException as exc:  # noqa: BLE001 - the interpreter's own handling of an uncaught exception
        _uncaught(exc)
        return 1, isinstance(exc, KeyboardInterrupt)


def _exit_status(code: Any) -> int:
    """``SystemExit(code)``'s exit status, as the interpreter gives it: ``None`` 0, an int itself, anything else
    printed on stderr and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        sys.stderr.write(f"{code}\n")
    except (OSError, ValueError):
        pass
    return 1


def _uncaught(exc: BaseException) -> None:
    """The traceback ``sys.excepthook`` prints, from the program's own first frame (after runpy's)."""
    tb, start = exc.__traceback__, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == "runpy":  # "<frozen runpy>" where it is frozen (3.11)
            start = tb.tb_next
        tb = tb.tb_next
    try:
        sys.excepthook(type(exc), exc.with_traceback(start), start)  # the hook prints the exception's own
    except BaseException:  # noqa: BLE001 - a broken hook: the interpreter prints that it failed
        pass


def _finish(code: int, interrupted: bool) -> None:
    """The end of the interpreter: the program's threads joined, ``atexit`` handlers, the streams flushed, then
    ``os._exit`` (no module teardown); an uncaught ``KeyboardInterrupt`` ends it by SIGINT, as Python does."""
    import signal

    from mpsready.childproc import wind_down

    wind_down()
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code & 0xFF)

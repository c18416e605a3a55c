"""Processes the program starts by ``spawn`` (DataLoader workers, ``multiprocessing``) run on the emulated Mac too.

macOS starts child processes by ``spawn`` (Lib/multiprocessing/context.py: the default on darwin since Python
3.8): a fresh interpreter that re-imports the program's main module as ``__mp_main__``. ``mpsready run`` makes
its own children start the same way, and :func:`patch_command_line` prefixes the interpreter's ``-c`` program
(Lib/multiprocessing/spawn.py ``get_command_line``) with ``import mpsready.run.spawned`` so that each child
installs an emulator for the same target before the main module is re-imported: the dataset code of a worker
sees MPS available, CUDA absent and ``sys.platform == "darwin"``.

What a child hits is written, one JSON object a line, to the file named by ``MPSREADY_SPAWN_REPORT``, for the
parent (:func:`read_reports`): a Mac failure the child's emulator raised, or the one failure only ``spawn``
has (kind ``spawn``), a main module without an ``if __name__ == "__main__":`` guard that starts a process
while it is being re-imported (``multiprocessing.spawn._check_not_importing_main`` raises in the child; the
parent's DataLoader then raises "DataLoader worker (pid(s) ...) exited unexpectedly").
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

SPEC_VAR = "MPSREADY_SPAWN_SPEC"  # JSON: {"target": {...}, "root": ...}
REPORT_VAR = "MPSREADY_SPAWN_REPORT"

SPAWN_FIX = ("on macOS, DataLoader workers and other processes start by spawn, which re-imports the main "
             "module: put the program's top-level code under `if __name__ == \"__main__\":` (Python docs, "
             "multiprocessing, 'Safe importing of main module')")


def _report(entry: dict[str, Any]) -> None:
    path = os.environ.get(REPORT_VAR)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
    except OSError:
        pass


def read_reports(path: str) -> list[dict[str, Any]]:
    """The entries the program's spawned children wrote to ``path`` (none when the file is absent)."""
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
    except OSError:
        return []
    return out


def patch_command_line(root: str, target: dict[str, Any], report_path: str):
    """Make the spawned children of this process install the emulator; returns the undo."""
    from multiprocessing import spawn

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.environ[SPEC_VAR] = json.dumps({"target": target, "root": root})
    os.environ[REPORT_VAR] = report_path
    real = spawn.get_command_line

    def get_command_line(**kwds):
        cmd = real(**kwds)
        if "-c" in cmd:
            i = cmd.index("-c") + 1
            cmd = list(cmd)
            cmd[i] = (f"import sys; sys.path.insert(0, {here!r}); import mpsready.run.spawned as _m; _m.install(); "
                      + cmd[i])
        return cmd

    spawn.get_command_line = get_command_line

    def undo():
        spawn.get_command_line = real
        os.environ.pop(SPEC_VAR, None)
        os.environ.pop(REPORT_VAR, None)
    return undo


def install() -> None:
    """In a spawned child: the emulator for the parent's target, and the spawn-failure report."""
    from multiprocessing import spawn

    # a private CPython function (Lib/multiprocessing/spawn.py, 3.10-3.13), not in the stubs: read by name
    real_check = getattr(spawn, "_check_not_importing_main")

    def check():
        try:
            real_check()
        except RuntimeError as exc:
            _report({"kind": "spawn", "exception": "RuntimeError", "message": " ".join(str(exc).split()),
                     "fix": SPAWN_FIX})
            raise
    setattr(spawn, "_check_not_importing_main", check)
    raw = os.environ.get(SPEC_VAR)
    if not raw:
        return
    spec = json.loads(raw)
    from mpsready.emulate import Emulator, Target, mac_error_kind

    tgt = spec["target"]
    emu = Emulator(Target(tgt["torch"], tgt["macos"], bool(tgt.get("fallback"))), spec["root"])
    emu.install()
    try:  # a DataLoader worker sends its exception to the parent wrapped, without the mark (torch/_utils.py)
        from torch._utils import ExceptionWrapper

        real_init = ExceptionWrapper.__init__

        def init(self, exc_info=None, where="in background"):
            real_init(self, exc_info, where)
            exc = (exc_info or sys.exc_info())[1]
            kind = mac_error_kind(exc)
            if kind is not None:
                _report({"kind": kind, "exception": type(exc).__name__, "message": str(exc)[:2000]})
        setattr(ExceptionWrapper, "__init__", init)  # patched on the class, as the worker builds it
    except ImportError:
        pass
    import atexit

    def report_failures() -> None:
        # a child whose own wrapper caught the failure and exited (torch.multiprocessing.spawn's _wrap puts the
        # traceback on a queue and calls sys.exit(1); spawn_main's sys.exit runs atexit): its first Mac
        # failure still reaches the parent (issue 34)
        if emu.failures:
            j = emu.failures[0].judgement
            _report({"kind": j.kind, "exception": j.exception, "message": str(j.message)[:2000]})
    atexit.register(report_failures)
    real_hook = sys.excepthook

    def hook(tp, exc, tb):  # a Mac failure that ends the child (a worker's own error travels to the parent)
        kind = mac_error_kind(exc)
        if kind is not None:
            _report({"kind": kind, "exception": tp.__name__, "message": str(exc)[:2000]})
        real_hook(tp, exc, tb)
    sys.excepthook = hook

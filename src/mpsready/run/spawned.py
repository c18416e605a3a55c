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


CHILD_NOTE = "raised in a child process of the program"


def _report(entry: dict[str, Any]) -> None:
    path = os.environ.get(REPORT_VAR)
    if not path:
        return
    try:  # one write of one line (O_APPEND: lines of several children never mix); never through a planted link
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            os.write(fd, (json.dumps(entry) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
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
    os.environ[SPEC_VAR] = json.dumps({"target": target, "root": root})
    os.environ[REPORT_VAR] = report_path
    undo_patch = _patch_get_command_line()

    def undo():
        undo_patch()
        os.environ.pop(SPEC_VAR, None)
        os.environ.pop(REPORT_VAR, None)
    return undo


def _patch_get_command_line():
    """``multiprocessing.spawn.get_command_line`` prefixed with the install of :func:`install`; returns the undo."""
    from multiprocessing import spawn

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
    return undo


# ------------------------------------------------------------------ every child's account (issue 34 item 6)
# A child of the program (spawned: a fresh interpreter with its own emulator, install(); forked: a copy of the
# program's process and its emulator, watch_forks()) writes one entry of kind "child" when it ends: whether a
# tensor reached MPS there and its first Mac failure. It ends by sys.exit (atexit), os._exit (a fork's end in
# multiprocessing, Lib/multiprocessing/popen_fork.py) or SIGTERM (Pool.terminate, Lib/multiprocessing/pool.py),
# so all three write it.
_ACCOUNT: dict[str, Any] = {}


def _start_account(emu: Any) -> None:
    """In a new child: what the emulator held when it began (a fork inherits the program's counts), and the
    child's first MPS landing and first Mac failure written when they happen (a Pool's worker may be killed
    before its exit hooks write anything; one line each, at most two per child)."""
    watching = _ACCOUNT.get("watching")
    _ACCOUNT.clear()
    _ACCOUNT.update(emu=emu, pid=os.getpid(), placed=emu.placed, failures=len(emu.failures), watching=watching,
                    raised=len(emu.raised), calls=sum(r.calls for r in emu.records.values()), done=False)
    judge, pid = emu.judge, os.getpid()
    real_landing, real_fail = judge.landing, emu.fail

    def landing(*args: Any, **kwargs: Any) -> Any:  # every tensor put on MPS asks the judge first (device.py)
        if os.getpid() == pid:
            judge.landing = real_landing  # once: the rest go straight to the judge
            _report({"kind": "child", "pid": pid, "mps_used": True, "failure": None})
        return real_landing(*args, **kwargs)

    def fail(j: Any, called: str, source: Any = None) -> Any:
        exc = real_fail(j, called, source)
        if os.getpid() == pid and not _ACCOUNT.get("failed"):
            _ACCOUNT["failed"] = True
            _report({"kind": "child", "pid": pid, "mps_used": True, "failure": _failure_entry(j, emu)})
        return exc

    judge.landing = landing  # on this child's copy of the instances: the program's process keeps its own
    emu.fail = fail


def _failure_entry(j: Any, emu: Any) -> dict[str, Any]:
    frame = emu.frames.locate(3) if hasattr(emu, "frames") else None
    return {"kind": j.kind, "exception": j.exception or ("MacCrash" if j.outcome == "crash" else None),
            "message": str(j.message or "")[:2000], "op": j.named or j.op, "dtype": j.dtype,
            "location": frame.to_dict() if frame else None}


def report_child() -> None:
    """Write this child's ``child`` entry (once; nothing outside a child the run watches)."""
    import signal

    emu = _ACCOUNT.get("emu")
    if emu is None or _ACCOUNT.get("done") or _ACCOUNT.get("pid") != os.getpid():
        return
    _ACCOUNT["done"] = True
    # a Pool's SIGTERM arriving while atexit writes this would end the process before the line is written
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}) if hasattr(signal, "pthread_sigmask") else None
    try:
        failures = emu.failures[_ACCOUNT["failures"]:] or list(emu.raised.values())[_ACCOUNT["raised"]:]
        used = (emu.placed > _ACCOUNT["placed"] or bool(failures)
                or sum(r.calls for r in emu.records.values()) > _ACCOUNT["calls"])
        failure = None
        if failures:
            d = failures[0].to_dict()
            failure = {k: d.get(k) for k in ("kind", "exception", "message", "location", "op", "dtype")}
            failure["message"] = str(failure["message"] or "")[:2000]
        _report({"kind": "child", "pid": os.getpid(), "mps_used": used, "failure": failure})
    except Exception:  # noqa: BLE001 - the child's own exit must happen whatever the account does
        pass
    finally:
        if blocked is not None and signal.SIGTERM not in blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _on_sigterm(signum, frame) -> None:  # a Pool's worker ends by SIGTERM: write the account, then end as before
    import signal

    report_child()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _watch_end() -> None:
    """SIGTERM writes the account first, unless the program set a handler of its own. A fork inherits the run's
    own watchdog handler (:func:`mpsready.childproc.watch_parent`, which ends the whole run): replaced here, or a
    Pool's ``terminate`` of a forked worker killed the run and removed its result."""
    import signal

    try:
        handler = signal.getsignal(signal.SIGTERM)
        if handler in (signal.SIG_DFL, None) or getattr(handler, "__module__", None) == "mpsready.childproc":
            signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # not the main thread
        pass


def watch_forks(emu: Any) -> None:
    """In ``mpsready run``'s child: a process the program forks (``os.fork``, multiprocessing's ``fork`` and
    ``forkserver`` start methods) keeps the emulated Mac it inherited and writes its account when it ends."""
    def after_in_child() -> None:
        if not os.environ.get(REPORT_VAR):
            return  # the run is over (the undo took the report path away)
        _start_account(emu)
        _watch_end()
    if not _ACCOUNT.get("watching"):
        os.register_at_fork(after_in_child=after_in_child)  # cannot be unregistered: checks REPORT_VAR instead
        _ACCOUNT["watching"] = True


def children(entries: list[dict[str, Any]], pid: int | None = None) -> dict[str, Any]:
    """What the program's children reported: ``{"reported": N, "mps_used": N, "failed": N}`` (children counted by
    pid) and ``first_failure``, the first child Mac failure shaped as a run document's failure, or ``None``.
    ``pid``: the program's own process, whose entries are not a child's."""
    seen: dict[Any, dict[str, Any]] = {}
    first = None
    for e in entries:
        if e.get("kind") != "child" or e.get("pid") == pid:
            continue
        had = seen.setdefault(e.get("pid"), {"mps_used": False, "failure": None})
        had["mps_used"] = had["mps_used"] or bool(e.get("mps_used"))
        had["failure"] = had["failure"] or e.get("failure")
        f = e.get("failure")
        if first is None and isinstance(f, dict):
            first = {"kind": f.get("kind") or "error", "exception": f.get("exception") or "RuntimeError",
                     "message": f"{f.get('message') or ''} ({CHILD_NOTE}, pid {e.get('pid')})"[:2000],
                     "location": f.get("location"), "op": f.get("op"), "dtype": f.get("dtype"), "mac": True}
    return {"reported": len(seen), "mps_used": sum(1 for e in seen.values() if e.get("mps_used")),
            "failed": sum(1 for e in seen.values() if isinstance(e.get("failure"), dict)), "first_failure": first}


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
    emu = Emulator(Target(tgt["torch"], tgt["macos"], bool(tgt.get("fallback")), tgt.get("machine", "arm64")), spec["root"])
    emu.install()
    _start_account(emu)  # its MPS use and first Mac failure, written when it ends
    _watch_end()
    watch_forks(emu)
    _patch_get_command_line()  # what this child spawns in turn runs on the emulated Mac too
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
        report_child()
    atexit.register(report_failures)
    real_hook = sys.excepthook

    def hook(tp, exc, tb):  # a Mac failure that ends the child (a worker's own error travels to the parent)
        kind = mac_error_kind(exc)
        if kind is not None:
            _report({"kind": kind, "exception": tp.__name__, "message": str(exc)[:2000]})
        real_hook(tp, exc, tb)
    sys.excepthook = hook

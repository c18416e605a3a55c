"""Child processes that run the project's code: ``run``'s child and ``record``'s worker.

**Import path.** ``python -m mpsready.run.child`` would put the current folder first on ``sys.path``: a
``json.py`` there would be imported by mpsready's own child, and a ``mpsready/`` folder there would replace
the emulator. :func:`command` starts the child as ``python -c BOOT SRC MODULE ARGS``, where ``BOOT`` drops the
folder ``-c`` puts first (``''``, the current folder; Python's ``-P`` semantics, which 3.10 lacks), puts
``SRC`` (the folder this mpsready package lives in) first unless it is on the path already, imports
``MODULE`` and calls its ``main(ARGS)``. The user's ``PYTHONPATH`` travels aside in
:data:`USER_PATH` (:func:`child_env`), so nothing of the user's is importable until the child has loaded its
machinery (the emulator, the recorder, torch) and calls :func:`enter_user_path`, which puts the path a Mac
would have in front: the script's folder for ``python script.py``, the current folder for ``python -m``
(Python's own rule for ``sys.path[0]``, docs "sys.path module search path"), then the user's
``PYTHONPATH``, restored in ``os.environ`` for the program's own subprocesses.

**Lifetime.** :func:`run_group` starts the child in its own session (a process group holding everything the
child starts; for an interactive ``run``, a group of its own that holds the terminal) and ends that group: on
the timeout, on SIGTERM/SIGINT/SIGHUP to the parent (those it was not started ignoring, :func:`catch`; then
:class:`Interrupted` is raised in the parent), after the child exits, and when the parent dies by any means
(SIGKILL included): the child's :func:`watch_parent` thread reads a pipe whose only write end the parent holds
and kills the group at end of file; on Linux the parent also sets ``PR_SET_PDEATHSIG`` (SIGTERM) before exec.
Paths named in :data:`CLEANUP` (the parent's temporary folders) are removed by the watchdog first.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from typing import Any

PARENT_FD = "MPSREADY_PARENT_FD"
USER_PATH = "MPSREADY_USER_PYTHONPATH"
CLEANUP = "MPSREADY_PARENT_CLEANUP"

# sys.argv: ['-c', SRC, MODULE, *ARGS]
_BOOT = ("import sys\n"
         "if sys.path and sys.path[0] == '':\n"
         "    del sys.path[0]\n"
         "if sys.argv[1] not in sys.path:\n"
         "    sys.path.insert(0, sys.argv[1])\n"
         "import importlib\n"
         "raise SystemExit(importlib.import_module(sys.argv[2]).main(sys.argv[3:]))\n")


def package_root() -> str:
    """The folder holding the ``mpsready`` package this process runs (``src`` in a checkout)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def command(python: str, module: str, args: list[str]) -> list[str]:
    """The argv that runs ``module.main(args)`` in ``python`` with nothing of the user's importable."""
    return [python, "-c", _BOOT, package_root(), module, *args]


def child_env(env: dict[str, str], cleanup: list[str] | None = None) -> dict[str, str]:
    """``env`` for :func:`command`: ``PYTHONPATH`` moved aside into :data:`USER_PATH` (JSON; ``null``: unset),
    ``cleanup`` (folders the watchdog removes when the parent dies) in :data:`CLEANUP`."""
    env = dict(env)
    env[USER_PATH] = json.dumps(env.pop("PYTHONPATH", None))
    if cleanup:
        env[CLEANUP] = json.dumps([str(p) for p in cleanup])
    return env


def enter_user_path(first: str | None) -> list[str]:
    """In the child, after its machinery is imported: ``first`` (the script's folder, or the current folder for
    ``-m``; ``None``: none) and the user's ``PYTHONPATH`` entries put in front of ``sys.path``, ``PYTHONPATH``
    restored in ``os.environ``. Returns the entries added. A process not started by :func:`command` (no
    :data:`USER_PATH`) keeps its ``PYTHONPATH`` entries where Python put them."""
    raw = os.environ.pop(USER_PATH, None)
    user = json.loads(raw) if raw else None
    entries: list[str] = []
    if raw is not None and user is not None:
        os.environ["PYTHONPATH"] = user
        entries = [p for p in user.split(os.pathsep) if p]
    added = ([first] if first else []) + entries
    sys.path[0:0] = added
    unshadow(added)
    return added


#: Modules the runner keeps although the program's folder holds one of the same name: PyTorch and its array
#: library (the emulator is built on them), mpsready, and what mpsready imports lazily while the program runs
#: (``packaging`` in the op judges, ``rich`` in the renderers).
KEEP_LOADED = frozenset({"torch", "numpy", "mpsready", "packaging", "rich"})


def unshadow(entries: list[str]) -> list[str]:
    """Forget (from ``sys.modules``) the third-party modules this process loaded before the program starts whose
    name a module or regular package in ``entries`` (the program's own path, in order) also holds, so that the
    program's ``import yaml`` finds its own ``yaml.py`` as under a plain ``python`` (h40: the runner's PyYAML
    answered it). The standard library is left as loaded (a plain run has most of it loaded too), and so is
    :data:`KEEP_LOADED`; a folder without ``__init__.py`` is a namespace portion that never shadows a module, so it
    is not counted. Returns the names forgotten; the runner's own references to them stay valid."""
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    gone: list[str] = []
    for entry in entries:
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for n in names:
            mod = n[:-3] if n.endswith(".py") else n if os.path.isfile(os.path.join(entry, n, "__init__.py")) else ""
            if not mod or mod in stdlib or mod in KEEP_LOADED or mod in gone or mod not in sys.modules:
                continue
            where = getattr(sys.modules[mod], "__file__", None) or ""
            if os.path.abspath(where).startswith(os.path.abspath(entry) + os.sep):
                continue  # already the program's own
            for key in [k for k in sys.modules if k == mod or k.startswith(mod + ".")]:
                del sys.modules[key]
            gone.append(mod)
    return gone


class Interrupted(BaseException):
    """A signal reached the parent while its child ran; the child's group is already killed."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def kill_group(pgid: int) -> None:
    """SIGKILL to the process group ``pgid``; nothing when it is gone already."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _load_prctl():
    """libc's ``prctl`` on Linux (``None`` elsewhere, e.g. macOS, where the parent pipe alone is the watchdog)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h (Linux 3.4)

# the children :func:`run_group` started and has not reaped yet, in every thread (a release matrix runs several
# at a time): never an orphan for :func:`end_adopted` to end; the lock covers starting one and ending orphans
LIVE: set[int] = set()
LIVE_LOCK = threading.Lock()


def adopt_orphans() -> set[int] | None:
    """Make this process the subreaper of its descendants (Linux): a process the program starts in a new session
    (``setsid``, a daemon) is adopted by this process when its parent exits, instead of by init, so
    :func:`end_adopted` can end it. Returns this process's children now (not to be touched), or ``None`` where
    that is not possible (not Linux)."""
    if PRCTL is None or PRCTL(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return None
    return _children()


def _children() -> set[int]:
    """The process ids whose parent is this process (``/proc/PID/stat``, field 4)."""
    me, out = os.getpid(), set[int]()
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            out.add(int(name))
    return out


def end_adopted(before: set[int], rounds: int = 20) -> None:
    """SIGKILL and reap every child of this process that was not one before the run (``before``): the program's
    descendants that left its process group and were adopted here (:func:`adopt_orphans`). A daemon's own
    children are adopted in turn when it dies, hence the rounds."""
    import time

    for _ in range(rounds):
        with LIVE_LOCK:  # another thread's child (started after ``before``) is not an orphan
            new = _children() - before - LIVE
            for pid in new:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            for pid in new:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
        if not new:
            return
        time.sleep(0.01)


def die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies (the child's handler then kills its group)."""
    PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def _terminal() -> int | None:
    """The file descriptor of this process's controlling terminal on stdin when this process's group is the
    terminal's foreground group (an interactive ``mpsready run``); else ``None``."""
    try:
        fd = sys.stdin.fileno()
        return fd if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp() else None
    except (AttributeError, OSError, ValueError):
        return None


def _take_terminal(fd: int) -> None:
    """In the child before exec: its own process group (same session), made the terminal's foreground group,
    so that the program reads the terminal and gets Ctrl-C as it would when started from the shell."""
    os.setpgid(0, 0)
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # tcsetpgrp from a background group raises SIGTTOU
    try:
        os.tcsetpgrp(fd, os.getpgrp())
    finally:
        signal.signal(signal.SIGTTOU, old)
    if PRCTL:
        die_with_parent()


def _give_back_terminal(fd: int) -> None:
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(fd, os.getpgrp())
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def _wait_at_terminal(proc: subprocess.Popen, tty: int, timeout: float | None) -> int:
    """``proc.wait`` for a child that holds the terminal, passing job control through: when the program is
    stopped (Ctrl-Z stops the terminal's foreground group, the child's), this process gives the terminal back
    and stops itself, so the shell sees its job stopped; when the shell continues it (``fg``), the terminal goes
    back to the child's group and the group is continued. Raises ``subprocess.TimeoutExpired`` after
    ``timeout`` seconds. Stop events are read with ``waitid(WSTOPPED | WNOHANG)``, which never reaps an exit
    (``proc.wait`` gets the status)."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise subprocess.TimeoutExpired(proc.args, timeout if timeout is not None else 0.0)
        try:
            return proc.wait(timeout=0.2 if left is None else min(0.2, left))
        except subprocess.TimeoutExpired:
            pass
        try:
            stopped = os.waitid(os.P_PID, proc.pid, os.WSTOPPED | os.WNOHANG)
        except (OSError, AttributeError):
            stopped = None
        if stopped is None:
            continue
        _give_back_terminal(tty)
        os.kill(os.getpid(), signal.SIGSTOP)  # resumed here by the shell's fg or bg
        try:
            if os.tcgetpgrp(tty) == os.getpgrp():  # fg: the program gets the terminal again
                old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
                try:
                    os.tcsetpgrp(tty, proc.pid)
                finally:
                    signal.signal(signal.SIGTTOU, old)
        except OSError:
            pass
        try:
            os.killpg(proc.pid, signal.SIGCONT)
        except (ProcessLookupError, PermissionError):
            pass


def catch(signals: tuple[signal.Signals, ...], handler: Any) -> dict[signal.Signals, Any]:
    """Install ``handler`` for each of ``signals`` this process was not started ignoring; the previous handlers,
    to restore. An ignored signal stays ignored, as it does for the program run directly: ``nohup`` ignores
    SIGHUP, and a shell without job control starts an asynchronous command (``cmd &`` in a script) with SIGINT and
    SIGQUIT ignored (POSIX.1-2017, Shell Command Language 2.11); Python then keeps SIGINT ignored (no
    ``KeyboardInterrupt``: signal module docs, "if the parent process has not changed it"). Catching it here
    anyway ended ``nohup mpsready run ...`` and its program at the terminal's hang-up."""
    previous: dict[signal.Signals, Any] = {}
    for sig in signals:
        if signal.getsignal(sig) != signal.SIG_IGN:
            previous[sig] = signal.signal(sig, handler)
    return previous


def run_group(argv: list[str], *, env: dict[str, str], cwd: str | None = None, stdin: Any = None,
              stdout: Any = None, stderr: Any = None, timeout: float | None = None,
              foreground: bool = False) -> tuple[int, bool]:
    """Run ``argv`` as the leader of a process group of its own; ``(returncode, timed_out)`` (negative
    returncode: the signal that ended it). Raises :class:`Interrupted` after SIGTERM/SIGINT/SIGHUP reached this
    process (from the main thread only; the child's group is killed first). The group is killed on the timeout
    and after the child exits (what it left running). When this process dies the child's :func:`watch_parent`
    ends it.

    The group leads a new session, except with ``foreground`` when this process is the foreground of a terminal
    (an interactive ``mpsready run``): then the child's group is made the terminal's foreground group (same
    session), so the program can read the terminal (``input()``, ``pdb``) and Ctrl-C reaches the program, not
    this process; the terminal is given back when the child ends."""
    read_fd, write_fd = os.pipe()
    env = dict(env, **{PARENT_FD: str(read_fd)})
    before = adopt_orphans()
    previous: dict[signal.Signals, Any] = {}
    proc = None
    tty = _terminal() if foreground and stdin is None else None

    def on_signal(signum, _frame):
        if proc is not None:
            kill_group(proc.pid)
        raise Interrupted(signum)

    try:
        with LIVE_LOCK:
            if tty is not None:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
                                        pass_fds=(read_fd,), preexec_fn=lambda: _take_terminal(tty))
            else:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
                                        start_new_session=True, pass_fds=(read_fd,),
                                        preexec_fn=die_with_parent if PRCTL else None)
            LIVE.add(proc.pid)
        os.close(read_fd)
        read_fd = -1
        if threading.current_thread() is threading.main_thread():
            previous = catch((signal.SIGTERM, signal.SIGINT, signal.SIGHUP), on_signal)
        try:
            return (proc.wait(timeout=timeout) if tty is None else _wait_at_terminal(proc, tty, timeout)), False
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            return proc.wait(), True
        finally:
            kill_group(proc.pid)  # whatever the child started and left running
            if proc.poll() is None:
                proc.wait()
            with LIVE_LOCK:
                LIVE.discard(proc.pid)
            if before is not None:
                end_adopted(before)  # and what left the group (setsid daemons), adopted by this process
            if tty is not None:
                _give_back_terminal(tty)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)


def watch_parent() -> None:
    """In the child: end this process group when the parent dies (module docstring). Nothing when this process
    was not started by :func:`run_group` (no :data:`PARENT_FD`, or not the leader of its group)."""
    cleanup = json.loads(os.environ.pop(CLEANUP, "null") or "null") or []

    def end_group(*_args: Any) -> None:
        for path in cleanup:
            shutil.rmtree(path, ignore_errors=True)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    fd = os.environ.pop(PARENT_FD, None)
    if fd is None or os.getpgrp() != os.getpid():
        return
    signal.signal(signal.SIGTERM, end_group)

    def wait() -> None:
        try:
            while os.read(int(fd), 1024):
                pass
        except OSError:
            pass
        end_group()

    threading.Thread(target=wait, name="mpsready-parent-watch", daemon=True).start()


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (signal 0): a folder left by a killed run names its owner's pid, and only a
    folder whose owner is gone is removed. A process of another user counts as alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wind_down() -> None:
    """What the interpreter's exit does before its module teardown: the program's non-daemon threads joined, its
    ``atexit`` handlers run (Python's own order, ``Py_FinalizeEx``), stdout and stderr flushed. The children that end
    by ``os._exit`` right after (``run``'s child, the zygote's plain jobs) call it so a program sees the exit it
    would see under a fresh interpreter, less the teardown of modules."""
    import atexit

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass

"""Import once, fork per job (issue 39): the release matrix (``run --torch all``) pays PyTorch's import once.

A **zygote** is one ``python -c BOOT SRC mpsready.run.zygote RELEASES`` (:func:`mpsready.childproc.command`:
nothing of the user's importable, the environment of :func:`mpsready.childproc.child_env`) that imports torch,
mpsready's emulator and the child runner and loads the tables of the requested releases, then waits for jobs on a
pipe. Per job (a run spec, :mod:`mpsready.run.child`, and the file its output goes to) it forks a **monitor**,
which forks the **job**:

* the job is what a spawned child was (:func:`mpsready.childproc.run_group`): the leader of a session of its own,
  ``PR_SET_PDEATHSIG`` to its monitor, stdin ``/dev/null``, stdout and stderr the job's file, the parent's pipe
  watchdog (:func:`mpsready.childproc.watch_parent`: the group ends when ``mpsready run`` dies), the same
  environment, working folder and ``sys.path`` (mpsready's folder first, the user's entries added by the child
  only once its machinery is loaded: :func:`mpsready.childproc.enter_user_path`), then ``child.main([SPEC])``
  returns up the zygote's stack, so the job ends as a child process did: the interpreter's own exit (the
  program's ``atexit`` handlers and threads), its exit status the child's;
* the monitor, a Linux subreaper (what the program started in a new session is adopted by it), waits for the
  job, kills the job's group (what it left running), ends the orphans it adopted
  (:func:`mpsready.childproc.end_adopted`) and writes the job's exit status to the reply pipe.

The zygote starts no thread (a fork keeps only the forking thread) and runs no torch op (PyTorch's thread pools are
made lazily, on a first parallel op, never here). ``mpsready run`` kills its group (the zygote and the
monitors) once every job is answered (a monitor's reply is its last act), or the zygote ends itself when
``mpsready run`` dies (its pipe watchdog reaches end of file); the jobs, in sessions of their own, end by their
own watchdog and their death signal.

A job may carry its own environment, working folder and deadline (``migrate --verify``'s runs, each in the copy it
runs in: its monitor kills the job's group at the deadline and says so), and may be a plain Python program instead of
the child runner (:mod:`mpsready.run.plain`: ``--verify``'s CPU runs, stdout and stderr to files of their own).

Only on Linux (:func:`available`; elsewhere, as with ``MPSREADY_ZYGOTE=0``, a fresh interpreter per release). A
zygote that does not start (its import fails) or dies leaves the jobs it has not answered to the spawned path, so a
run never has fewer results than before.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from typing import Any

from mpsready import childproc

ENV_OFF = "MPSREADY_ZYGOTE"  # "0": a fresh interpreter per release (the path before issue 39)
READY = "ready"
READY_WAIT_S = 600.0


def available() -> bool:
    """Whether jobs are forked here: Linux (``os.fork`` exists elsewhere too, but macOS's system frameworks are
    not safe to use in a forked child, which is why Python's ``multiprocessing`` spawns there since 3.8; Windows
    has no fork) and ``MPSREADY_ZYGOTE`` is not ``0``."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and os.environ.get(ENV_OFF, "1") != "0"


class ZygoteGone(RuntimeError):
    """The zygote ended (or never started) before it answered a job."""


class Zygote:
    """The parent's handle (``mpsready run``): :meth:`start`, then :meth:`run` from any number of threads,
    :meth:`close` at the end."""

    def __init__(self, releases: list[str], env: dict[str, str], log: str, cleanup: list[str] | None = None,
                 macos: str = "15.5", fallback: bool = False, plain: bool = False):
        self.env, self.log, self.cleanup = env, log, cleanup
        self.warm = {"releases": list(releases), "macos": macos, "fallback": bool(fallback), "plain": bool(plain)}
        self.proc: subprocess.Popen | None = None
        self.loaded: dict[str, Any] = {}  # what the zygote said it loaded (mpsready.run.plain.loaded)
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: dict[int, list[Any]] = {}  # job id -> [threading.Event, status or None, timed out]
        self._gone = False
        self._closed = False
        self._watch_w: int | None = None  # held open while this process lives: its end of file ends the jobs
        self._req: Any = None  # the request pipe's write end (a text file), the reply pipe's read end
        self._rep: Any = None

    def start(self) -> bool:
        """Start the zygote and wait until it has loaded; False (nothing left running) when it could not."""
        return self.launch() and self.ready()

    def launch(self) -> bool:
        """Start the zygote without waiting for it to load (:meth:`ready` waits): the caller's thread must live as
        long as the zygote (its death signal is sent when the thread that started it ends, ``PR_SET_PDEATHSIG``)."""
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        watch_r, watch_w = os.pipe()
        env = childproc.child_env(self.env, cleanup=self.cleanup)
        env[childproc.PARENT_FD] = str(watch_r)
        env["MPSREADY_ZYGOTE_FDS"] = f"{req_r},{rep_w}"
        try:
            with open(self.log, "wb") as log, childproc.LIVE_LOCK, self._lock:
                if self._closed:
                    raise OSError("closed before it started")
                self.proc = subprocess.Popen(
                    childproc.command(sys.executable, "mpsready.run.zygote", [json.dumps(self.warm)]),
                    env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                    pass_fds=(req_r, rep_w, watch_r),
                    preexec_fn=childproc.die_with_parent if childproc.PRCTL else None)
                childproc.LIVE.add(self.proc.pid)
        except OSError:
            for fd in (req_r, req_w, rep_r, rep_w, watch_r, watch_w):
                os.close(fd)
            return False
        for fd in (req_r, rep_w, watch_r):
            os.close(fd)
        self._watch_w = watch_w
        self._req = os.fdopen(req_w, "w", buffering=1)
        self._rep = os.fdopen(rep_r, "r")
        return True

    def ready(self) -> bool:
        """Wait until the launched zygote has loaded; False (nothing left running) when it did not: an import
        failed, or it has not loaded in :data:`READY_WAIT_S` (a hang in an import), or :meth:`close` came first."""
        rep = self._rep
        if rep is None:
            return False
        try:
            ready, _, _ = select.select([rep], [], [], READY_WAIT_S)
            first = rep.readline().strip() if ready else ""
        except (OSError, ValueError):  # closed meanwhile
            first = ""
        word, _, info = first.partition(" ")
        if word != READY:
            self.close()
            return False
        self.loaded = json.loads(info) if info else {}
        threading.Thread(target=self._read_replies, name="mpsready-zygote-replies", daemon=True).start()
        return True

    def _read_replies(self) -> None:
        for line in self._rep:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                slot = self._waiting.pop(int(reply["id"]), None)
            if slot is not None:
                slot[1], slot[2] = int(reply["status"]), bool(reply.get("timed_out"))
                slot[0].set()
        self._rep.close()
        with self._lock:  # the zygote ended: nobody answers the jobs still waiting
            self._gone = True
            for slot in self._waiting.values():
                slot[0].set()
            self._waiting.clear()

    def run(self, spec_path: str, output: str) -> int:
        """Run one job (``child.main([spec_path])``, its stdout and stderr to the file ``output``); its exit status
        (negative: the signal that ended it). Raises :class:`ZygoteGone` when the zygote ended first."""
        return self.run_job({"spec": spec_path, "output": output})[0]

    def run_job(self, job: dict[str, Any]) -> tuple[int, bool]:
        """Run one job; ``(exit status, timed out)``. ``job``: ``spec`` and ``output`` (the run child), or ``plain``
        (:func:`mpsready.run.plain.run`: a plain Python program) with ``stdout`` and ``stderr``; optionally
        ``env`` (the job's whole environment; default the zygote's), ``cwd`` (its working folder) and ``timeout``
        (seconds: then its monitor kills its group). Raises :class:`ZygoteGone` when the zygote ended first."""
        slot: list[Any] = [threading.Event(), None, False]
        with self._lock:
            if self._gone or self._closed:
                raise ZygoteGone("the zygote has ended")
            number = self._next
            self._next += 1
            self._waiting[number] = slot
            try:
                self._req.write(json.dumps({**job, "id": number}) + "\n")
            except (OSError, ValueError, AttributeError):
                self._waiting.pop(number, None)
                raise ZygoteGone("the zygote has ended") from None
        slot[0].wait()
        if slot[1] is None:
            raise ZygoteGone("the zygote ended before the job did")
        return slot[1], slot[2]

    def close(self) -> None:
        """End the zygote and its monitors (every job it answered has ended, its monitor done with it: the reply is
        the monitor's last act); nothing of the zygote's own exit (tearing torch down) is waited for."""
        with self._lock:
            self._closed = True
        if self.proc is None:
            return
        childproc.kill_group(self.proc.pid)
        self.proc.wait()
        with childproc.LIVE_LOCK:
            childproc.LIVE.discard(self.proc.pid)
        try:  # the replies' reader closes its own pipe at end of file
            if self._req is not None:
                self._req.close()
        except OSError:
            pass
        if self._watch_w is not None:
            os.close(self._watch_w)
            self._watch_w = None
        self.proc = None


# ---- the zygote process ---------------------------------------------------------------------------------------


def _warm(releases: list[str], macos: str, fallback: bool, plain: bool = False) -> None:
    """Everything a job loads before its program starts that is the same for every job: torch, the emulator, the
    child runner and what it imports on its way, and per release its table and the curated facts its judge reads
    (cached per process: an :class:`~mpsready.emulate.Emulator` made here and dropped leaves them loaded; nothing
    is installed). With ``plain``, first what a plain run's ``sitecustomize`` imports, so that the modules only
    mpsready imported are known (:mod:`mpsready.run.plain`)."""
    if plain:
        from mpsready.run import plain as plain_run

        plain_run.warm()
    import torch  # noqa: F401

    import mpsready.numerics.hooks  # noqa: F401
    import mpsready.run.child  # noqa: F401
    import mpsready.run.spawned  # noqa: F401
    import mpsready.run.status  # noqa: F401
    from mpsready.emulate import Emulator, Target

    for rel in releases:
        Emulator(Target(rel, macos, fallback), os.getcwd())
    if plain:
        plain_run.settle()


def main(argv: list[str]) -> int:
    req_fd, rep_fd = (int(x) for x in os.environ.pop("MPSREADY_ZYGOTE_FDS").split(","))
    _warm(**json.loads(argv[0]))
    watch_fd = int(os.environ[childproc.PARENT_FD])  # kept in the environment: each job's watchdog reads it
    sys.stdout.flush()
    sys.stderr.flush()
    from mpsready.run import plain

    os.write(rep_fd, f"{READY} {json.dumps(plain.loaded())}\n".encode())
    monitors: set[int] = set()
    pending = b""
    while True:
        ready, _, _ = select.select([req_fd, watch_fd], [], [], 0.5)
        _reap(monitors, block=False)
        if watch_fd in ready and not os.read(watch_fd, 1024):  # mpsready run died: end the monitors too
            os.killpg(os.getpgrp(), signal.SIGKILL)
        if req_fd not in ready:
            continue
        chunk = os.read(req_fd, 65536)
        if not chunk:  # no more jobs
            _reap(monitors, block=True)
            return 0
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            job = json.loads(line)
            pid = os.fork()
            if pid == 0:
                return _monitor(job, req_fd, rep_fd, watch_fd)  # returns only in the job
            monitors.add(pid)


def _reap(monitors: set[int], block: bool) -> None:
    for pid in list(monitors):
        try:
            done, _status = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            monitors.discard(pid)


def _monitor(job: dict[str, Any], req_fd: int, rep_fd: int, watch_fd: int) -> int:
    """In the monitor (forked from the zygote): fork the job and wait for it, report, ``os._exit``. Returns only
    in the job, with the child's exit status (the zygote's ``main`` returns it: the interpreter's exit)."""
    os.close(req_fd)
    status = 3
    try:
        before = childproc.adopt_orphans()
        pid = os.fork()
        if pid == 0:
            os.close(rep_fd)
            return _job(job, os.getppid())
        timed_out = [False]
        try:
            if job.get("timeout"):  # the job's deadline: its group is killed (as run_group's timeout does)
                def on_alarm(*_args: Any) -> None:
                    timed_out[0] = True
                    childproc.kill_group(pid)
                    try:
                        os.kill(pid, signal.SIGKILL)  # not yet the leader of its group
                    except ProcessLookupError:
                        pass

                signal.signal(signal.SIGALRM, on_alarm)
                signal.setitimer(signal.ITIMER_REAL, max(0.01, float(job["timeout"])))
            _, raw = os.waitpid(pid, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
            status = os.waitstatus_to_exitcode(raw)
        finally:
            childproc.kill_group(pid)  # whatever the job started and left running
            if before is not None:
                childproc.end_adopted(before)  # and what left the group, adopted by this monitor
        reply = {"id": job["id"], "status": status, "timed_out": timed_out[0]}
        os.write(rep_fd, (json.dumps(reply) + "\n").encode())
    finally:
        if os.getpid() != _job_pid[0]:
            os._exit(0)
    return status  # pragma: no cover - the job never reaches here


_job_pid = [-1]


def _job(job: dict[str, Any], monitor: int) -> int:
    """In the job (forked from its monitor): what :func:`mpsready.childproc.run_group` gives a spawned child, then
    the child runner. Returns its exit status."""
    _job_pid[0] = os.getpid()
    os.setsid()  # a session and process group of its own, as start_new_session gives
    if childproc.PRCTL is not None:
        childproc.die_with_parent()
        if os.getppid() != monitor:  # the monitor died before the death signal was set
            os._exit(1)
    null = os.open(os.devnull, os.O_RDONLY)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    out = os.open(job.get("stdout") or job["output"], flags, 0o600)
    err = os.open(job["stderr"], flags, 0o600) if job.get("stderr") else out
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in {null, out, err}:
        os.close(fd)
    if job.get("cwd"):
        os.chdir(job["cwd"])
    if job.get("env") is not None:  # the job's own environment; the zygote's watchdog pipe stays its parent's
        env = {**job["env"], childproc.PARENT_FD: os.environ[childproc.PARENT_FD]}
        os.environ.clear()
        os.environ.update(env)
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:  # a fresh process seeds numpy's global generator from the OS (random does at fork)
        numpy_random.seed()
    if job.get("plain") is not None:
        from mpsready.run import plain

        return plain.run(job["plain"])
    from mpsready.run import child

    return child.main([job["spec"]])

"""The status line of ``mpsready run``: optimizer steps seen and ops judged, while the program runs.

The program runs in a child process (:mod:`mpsready.run.child`) and the parent only waits for it, so the
counts cross over in a small file beside the result document: the child's :class:`StatusWriter` replaces
``{"steps": N, "ops": M}`` there every :data:`WRITE_EVERY_S` seconds (one ``os.replace``: a reader never
sees half a file), and the parent's :class:`StatusLine` reads it and prints
``mpsready run: 12 optimizer steps, 34,102 ops judged (45 s)`` on stderr when the counts changed, at most
every :data:`PRINT_EVERY_S` seconds.

The program writes to the same terminal, so the status is whole lines (never a redrawn bar, which would
erase the program's own output). It is printed only when stderr is a terminal and ``-q`` is not given
(:func:`mpsready.progress.enabled`); never on stdout, so ``--format json`` stays one document.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Callable, TextIO

WRITE_EVERY_S = 0.5
PRINT_EVERY_S = 10.0
SUFFIX = ".status"  # beside the result document: OUT.status


def counts(emu: Any) -> dict[str, int]:
    """``{"steps": optimizer steps seen, "ops": aten calls judged}`` of an :class:`~mpsready.emulate.Emulator`
    (``steps`` and the ``calls`` of its ``records``)."""
    return {"steps": int(emu.steps), "ops": sum(r.calls for r in list(emu.records.values()))}


def write_status(path: str, doc: dict[str, int]) -> None:
    """Replace ``path`` by ``doc`` as JSON in one rename; raises ``OSError``."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    os.replace(tmp, path)


def read_status(path: str) -> dict[str, int] | None:
    """The counts last written to ``path``, or ``None`` when there are none yet (or the file is unreadable)."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), int) for k in ("steps", "ops")):
        return None
    return {"steps": doc["steps"], "ops": doc["ops"]}


def status_text(doc: dict[str, int], seconds: float) -> str:
    """``mpsready run: 1 optimizer step, 3 ops judged (2 s)``: the line :class:`StatusLine` prints."""
    steps, ops = doc["steps"], doc["ops"]
    return (f"mpsready run: {steps:,} optimizer step{'' if steps == 1 else 's'}, {ops:,} op{'' if ops == 1 else 's'} "
            f"judged ({seconds:.0f} s)")


class _Ticker:
    """A daemon thread calling ``tick()`` every ``every_s`` seconds until :meth:`stop`."""

    def __init__(self, tick: Callable[[], None], every_s: float) -> None:
        self.tick, self.every_s = tick, every_s
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="mpsready-status", daemon=True)

    def _loop(self) -> None:
        while not self.done.wait(self.every_s):
            self.tick()

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


class StatusWriter(_Ticker):
    """In the child: the emulator's :func:`counts` written to ``path`` every ``every_s`` seconds."""

    def __init__(self, path: str, emu: Any, every_s: float = WRITE_EVERY_S) -> None:
        super().__init__(self.write, every_s)
        self.path, self.emu = path, emu

    def write(self) -> None:
        try:
            write_status(self.path, counts(self.emu))
        except (OSError, RuntimeError):  # a full disk, or records resized mid-read: the next tick tries again
            pass


class StatusLine(_Ticker):
    """In the parent: a :func:`status_text` line on ``stream`` when the counts in ``path`` changed, at most
    every ``print_every_s`` seconds. ``clock`` returns seconds (tests pass a fake one and call :meth:`poll`)."""

    def __init__(self, path: str, stream: TextIO, print_every_s: float = PRINT_EVERY_S, *,
                 clock: Callable[[], float] = time.monotonic, heartbeat: bool = False) -> None:
        super().__init__(self.poll, WRITE_EVERY_S)
        self.path, self.stream, self.print_every_s, self.clock = path, stream, print_every_s, clock
        self.heartbeat = heartbeat  # a line every print_every_s even when nothing changed (output not a terminal)
        self.started = self.last = clock()
        self.shown: dict[str, int] | None = None

    def poll(self) -> None:
        now = self.clock()
        if now - self.last < self.print_every_s:
            return
        doc = read_status(self.path)
        if doc is None and self.heartbeat:
            doc = {"steps": 0, "ops": 0}  # still starting (importing torch): say it is alive
        if doc is None or (doc == self.shown and not self.heartbeat):
            return
        self.shown, self.last = doc, now
        self.stream.write(status_text(doc, now - self.started) + "\n")
        self.stream.flush()


HEARTBEAT_S = 30.0


class MatrixStatus(_Ticker):
    """In the parent of ``run --torch a,b,c``: a line per release when its child starts (``torch 2.3: started``),
    then, while it runs, its optimizer steps and ops judged from its status file when they changed (at most every
    ``print_every_s`` seconds on a terminal), or on every release still running every :data:`HEARTBEAT_S` seconds
    even when nothing changed (``heartbeat``: output that is not a terminal, a CI log). The end of each release
    is the caller's line. ``clock`` returns seconds (tests pass a fake one and call :meth:`poll`)."""

    def __init__(self, stream: TextIO, *, heartbeat: bool = False, print_every_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(self.poll, WRITE_EVERY_S)
        self.stream, self.heartbeat, self.clock = stream, heartbeat, clock
        self.print_every_s = print_every_s if print_every_s is not None else (HEARTBEAT_S if heartbeat else PRINT_EVERY_S)
        self.lock = threading.Lock()
        self.running: dict[str, tuple[str, float]] = {}  # release -> (status path, start time)
        self.shown: dict[str, dict[str, int] | None] = {}
        self.last: dict[str, float] = {}

    def started(self, release: str, path: str) -> None:
        now = self.clock()
        with self.lock:
            self.running[release] = (path, now)
            self.shown[release], self.last[release] = None, now
            self._write(f"  torch {release}: started")

    def ended(self, release: str) -> None:
        with self.lock:
            self.running.pop(release, None)

    def poll(self) -> None:
        now = self.clock()
        with self.lock:
            for release, (path, t0) in list(self.running.items()):
                if now - self.last[release] < self.print_every_s:
                    continue
                doc = read_status(path)
                if doc is None:
                    if not self.heartbeat:
                        continue
                    doc = {"steps": 0, "ops": 0}
                if doc == self.shown[release] and not self.heartbeat:
                    continue
                self.shown[release], self.last[release] = doc, now
                steps = doc["steps"]
                self._write(f"  torch {release}: step {steps:,}, {doc['ops']:,} op{'' if doc['ops'] == 1 else 's'} "
                            f"judged ({now - t0:.0f} s)")

    def _write(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass

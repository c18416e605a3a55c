"""Progress of ``mpsready migrate`` on stderr: planning (the scan's files, then the files planned) and applying
(the files written), shown once the work has taken a second.

Planning a tree of 2,000 files takes minutes (the scan, then libcst per file) and printed nothing. The bar
(:mod:`mpsready.progress`, the one every command uses) draws nothing during the first :data:`AFTER_S` seconds
(a small project finishes silently), then one transient bar (erased when the work ends). It is only made for a
terminal and never with ``-q``; it writes to stderr only, so ``--format json`` stdout stays one JSON document.

Two faces over one bar: ``with progress(total, description, quiet) as advance:`` (call ``advance()`` per item,
or ``advance.to(done, total)``), and :class:`PlanProgress` (:func:`for_cli`), whose ``scan``/``plan``
callbacks :func:`~mpsready.migrate.engine.migrate_path` calls with ``(done, total)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TextIO

from mpsready import progress as shared

AFTER_S = 1.0


class Advance:
    """What ``with progress(...)`` yields: ``advance(n=1)`` counts ``n`` more items done, ``advance.to(done,
    total)`` sets both; without a bar (quiet, not a terminal) both only count."""

    def __init__(self, bar: shared.NullBar, description: str, total: int) -> None:
        self.bar, self.description, self.total, self.done = bar, description, total, 0

    def __call__(self, n: int = 1) -> None:
        self.to(self.done + n, self.total)

    def to(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        self.bar.update(done, total=total)


def shown(quiet: bool, stream: TextIO) -> bool:
    """Whether a bar is drawn: never with ``-q``, only on a terminal."""
    return shared.enabled(stream, quiet)


@contextmanager
def progress(total: int, description: str, quiet: bool, *, stream: TextIO | None = None,
             clock: Callable[[], float] = time.monotonic) -> Iterator[Advance]:
    """A bar over ``total`` items on ``stream`` (default stderr) when :func:`shown`; erased on exit."""
    stream = sys.stderr if stream is None else stream
    with shared.progress(stream, quiet, total, description, after_s=AFTER_S, clock=clock) as bar:
        yield Advance(bar, description, total)


class PlanProgress:
    """Callbacks ``scan(done, total)`` and ``plan(done, total)``, then :meth:`stop`. ``stream`` is the
    terminal written to; ``clock`` returns seconds (tests pass a fake one)."""

    def __init__(self, stream: TextIO, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self._bar = shared.bar_on(stream, 0, "scanning", after_s=AFTER_S, clock=clock)

    def scan(self, done: int, total: int) -> None:
        self._bar.update(done, total=total, description="scanning")

    def plan(self, done: int, total: int) -> None:
        self._bar.update(done, total=total, description="planning edits")

    def stop(self) -> None:
        self._bar.stop()


def for_cli(quiet: bool, stream: TextIO | None = None) -> PlanProgress | None:
    """A :class:`PlanProgress` on ``stream`` (default stderr) when :func:`shown`; a started :class:`HeartbeatPlan`
    when the stream is not a terminal (a CI log); None with ``quiet``."""
    stream = sys.stderr if stream is None else stream
    if shown(quiet, stream):
        return PlanProgress(stream)
    return HeartbeatPlan(stream).start() if shared.heartbeat_wanted(stream, quiet) else None


def run_steps(quiet: bool, stream: TextIO | None = None, *, label: str = "verify",
              clock: Callable[[], float] = time.monotonic) -> Callable[[str], AbstractContextManager[None]]:
    """For ``--verify``: a context manager per run, which prints ``verify: DESCRIPTION ...`` when the run starts and
    ``verify: DESCRIPTION: done (12 s)`` when it ends, and in between a status line on a terminal or a heartbeat
    line every 30 s elsewhere (:func:`mpsready.progress.waiting`). Nothing with ``quiet``."""
    out = sys.stderr if stream is None else stream

    @contextmanager
    def step(description: str) -> Iterator[None]:
        if quiet:
            yield
            return
        out.write(f"{label}: {description} ...\n")
        out.flush()
        t0 = clock()
        with shared.waiting(out, quiet, f"{label}: {description}", clock=clock):
            yield
        out.write(f"{label}: {description}: done ({clock() - t0:.0f} s)\n")
        out.flush()

    return step


class HeartbeatPlan(PlanProgress):
    """:class:`PlanProgress`'s callbacks for output that is not a terminal: a plain line every 30 s saying where the
    planning is (``migrate: planning edits, 120 of 2,000 files (30 s)``)."""

    def __init__(self, stream: TextIO, *, every_s: float = shared.HEARTBEAT_S,  # noqa: D107
                 clock: Callable[[], float] = time.monotonic) -> None:
        # no bar (PlanProgress.__init__ would make one): lines only
        self.stream = stream
        self.phase, self.done, self.total = "scanning", 0, 0
        self.beat = shared.Heartbeat(stream, self._text, every_s, clock=clock)

    def _text(self, seconds: float) -> str:
        return f"migrate: {self.phase}, {self.done:,} of {self.total:,} files ({seconds:.0f} s)"

    def start(self) -> "HeartbeatPlan":
        self.beat.start()
        return self

    def scan(self, done: int, total: int) -> None:
        self.phase, self.done, self.total = "scanning", done, total

    def plan(self, done: int, total: int) -> None:
        self.phase, self.done, self.total = "planning edits", done, total

    def stop(self) -> None:
        self.beat.stop()

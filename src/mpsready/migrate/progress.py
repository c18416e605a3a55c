"""Progress of ``mpsready migrate`` on stderr (rich): planning (the scan's files, then the files planned) and
applying (the files written), shown once the work has taken a second.

Planning a tree of 2,000 files takes minutes (the scan, then libcst per file) and printed nothing. The bar
draws nothing during the first :data:`AFTER_S` seconds (a small project finishes silently), then one
transient bar (erased when the work ends). It is only made for a terminal and never with ``-q``; it writes
to stderr only, so ``--format json`` stdout stays one JSON document.

Two faces over one bar: ``with progress(total, description, quiet) as advance:`` (call ``advance()`` per item,
or ``advance.to(done, total)``), the small API a shared progress module can replace, and
:class:`PlanProgress` (:func:`for_cli`), whose ``scan``/``plan`` callbacks :func:`~mpsready.migrate.engine.migrate_path`
calls with ``(done, total)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

AFTER_S = 1.0
REFRESH_S = 0.1


class _Bar:
    """One lazily started transient rich bar on ``stream``; ``clock`` returns seconds (tests pass a fake)."""

    def __init__(self, stream: TextIO, clock: Callable[[], float]) -> None:
        self.stream, self.clock = stream, clock
        self.started = clock()
        self.bar: Any = None  # rich.progress.Progress, imported only when drawn
        self.task: Any = None
        self.last = 0.0

    def show(self, what: str, done: int, total: int) -> None:
        now = self.clock()
        if self.bar is None:
            if now - self.started < AFTER_S:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self.bar = Progress("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                console=Console(file=self.stream, force_terminal=True), transient=True,
                                auto_refresh=False)
            self.bar.start()
            self.task = self.bar.add_task(what, total=total)
        elif now - self.last < REFRESH_S and done < total:
            return
        self.last = now
        self.bar.update(self.task, description=what, completed=done, total=total)
        self.bar.refresh()

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class Advance:
    """What ``with progress(...)`` yields: ``advance(n=1)`` counts ``n`` more items done, ``advance.to(done,
    total)`` sets both; without a bar (quiet, not a terminal) both do nothing."""

    def __init__(self, bar: _Bar | None, description: str, total: int) -> None:
        self.bar, self.description, self.total, self.done = bar, description, total, 0

    def __call__(self, n: int = 1) -> None:
        self.to(self.done + n, self.total)

    def to(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if self.bar is not None:
            self.bar.show(self.description, done, total)


def shown(quiet: bool, stream: TextIO) -> bool:
    """Whether a bar is drawn: never with ``-q``, only on a terminal."""
    return not quiet and stream.isatty()


@contextmanager
def progress(total: int, description: str, quiet: bool, *, stream: TextIO | None = None,
             clock: Callable[[], float] = time.monotonic) -> Iterator[Advance]:
    """A bar over ``total`` items on ``stream`` (default stderr) when :func:`shown`; erased on exit."""
    stream = sys.stderr if stream is None else stream
    bar = _Bar(stream, clock) if shown(quiet, stream) else None
    try:
        yield Advance(bar, description, total)
    finally:
        if bar is not None:
            bar.stop()


class PlanProgress:
    """Callbacks ``scan(done, total)`` and ``plan(done, total)``, then :meth:`stop`. ``stream`` is the
    terminal written to; ``clock`` returns seconds (tests pass a fake one)."""

    def __init__(self, stream: TextIO, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self._bar = _Bar(stream, clock)

    def scan(self, done: int, total: int) -> None:
        self._bar.show("scanning", done, total)

    def plan(self, done: int, total: int) -> None:
        self._bar.show("planning edits", done, total)

    def stop(self) -> None:
        self._bar.stop()


def for_cli(quiet: bool, stream: TextIO | None = None) -> PlanProgress | None:
    """A :class:`PlanProgress` on ``stream`` (default stderr) when :func:`shown`; else None."""
    stream = sys.stderr if stream is None else stream
    return PlanProgress(stream) if shown(quiet, stream) else None

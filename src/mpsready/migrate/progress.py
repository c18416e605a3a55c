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
from contextlib import contextmanager
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
    """A :class:`PlanProgress` on ``stream`` (default stderr) when :func:`shown`; else None."""
    stream = sys.stderr if stream is None else stream
    return PlanProgress(stream) if shown(quiet, stream) else None

"""Progress of ``mpsready migrate``'s planning on stderr (rich), shown once planning has taken a second.

Planning a tree of 2,000 files takes minutes (the scan, then libcst per file) and printed nothing. A
:class:`PlanProgress` receives the scan's ``(done, total)`` over Python files and the plan's ``(done,
total)`` over the files it parses; it draws nothing during the first :data:`AFTER_S` seconds (a small
project finishes silently), then one transient bar (erased when planning ends). It is only made for a
terminal and never with ``-q`` (:func:`for_cli`); it writes to stderr only, so ``--format json`` stdout
stays one JSON document.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

AFTER_S = 1.0
REFRESH_S = 0.1


class PlanProgress:
    """Callbacks ``scan(done, total)`` and ``plan(done, total)``, then :meth:`stop`. ``stream`` is the
    terminal written to; ``clock`` returns seconds (tests pass a fake one)."""

    def __init__(self, stream: TextIO, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.clock = stream, clock
        self.started = clock()
        self.bar = None
        self.task = None
        self.last = 0.0

    def scan(self, done: int, total: int) -> None:
        self._show("scanning", done, total)

    def plan(self, done: int, total: int) -> None:
        self._show("planning edits", done, total)

    def _show(self, what: str, done: int, total: int) -> None:
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


def for_cli(quiet: bool, stream: TextIO | None = None) -> PlanProgress | None:
    """A :class:`PlanProgress` on ``stream`` (default stderr) when it is a terminal and not ``quiet``; else None."""
    stream = sys.stderr if stream is None else stream
    if quiet or not stream.isatty():
        return None
    return PlanProgress(stream)

"""A progress bar or status line on stderr for long work, shown only where a person is watching.

    with progress(sys.stderr, quiet=args.quiet, total=None, description="scan") as bar:
        bar.update(done, total=total)              # a bar: done / total, elapsed time
        bar.update(description="trace", reset=True)  # a new phase: its own elapsed time

It draws nothing (every call is a no-op) when ``quiet`` (``-q``) is set or when the stream is not a
terminal (a pipe, a file, CI logs), and it only ever writes to the stream given (stderr), so a command's
stdout (``--format json``/``sarif``) is never touched. ``total=None`` is a status line (a spinner, the
description, the elapsed time); a number is a bar (done of total). ``min_total`` keeps small jobs silent:
nothing is drawn until an update brings a total of at least that many (then a bar); ``after_s`` keeps short jobs
silent: nothing is drawn until an update comes that many seconds after the start (``clock``, seconds, tests pass a
fake one). The bar is transient: it is erased when the block ends, so the terminal keeps only what the command
printed.

``target`` is a text stream (``sys.stderr``) or a rich ``Console`` already used for the command's stderr
lines: lines it prints while the bar runs appear above the bar instead of tearing it. rich is imported only
when something will be drawn.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, Iterator, TextIO

# Columns of a bar: description, bar, done/total, elapsed. A status line: spinner, description, elapsed.


class NullBar:
    """What :func:`progress` yields when nothing is drawn: accepts every call, does nothing."""

    drawn = False  # whether a bar is on the screen now
    live = False  # whether updates can draw one (False: the caller may skip computing them)

    def update(self, completed: int | None = None, *, total: int | None = None, description: str | None = None,
               reset: bool = False) -> None:
        """See :meth:`RichBar.update`; here nothing."""


class RichBar(NullBar):
    """A rich ``Progress`` with one task, started on the first update that reaches ``min_total`` at least
    ``after_s`` seconds after it was made."""

    live = True

    def __init__(self, console: Any, total: int | None, description: str, min_total: int = 0, *,
                 after_s: float = 0.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.console, self.total, self.description, self.min_total = console, total, description, min_total
        self.after_s, self.clock = after_s, clock
        self.started = clock() if after_s else 0.0
        self.completed = 0
        self.bar: Any = None
        self.task: Any = None

    @property
    def drawn(self) -> bool:  # type: ignore[override]
        return self.bar is not None

    def update(self, completed: int | None = None, *, total: int | None = None, description: str | None = None,
               reset: bool = False) -> None:
        """``completed`` of ``total`` done (either left out: unchanged); ``description`` the text shown;
        ``reset``: start the elapsed time again (a new phase). Draws the bar the first time the total is at
        least ``min_total`` (a status line, ``total=None``, draws at once)."""
        if completed is not None:
            self.completed = completed
        if total is not None:
            self.total = total
        if description is not None:
            self.description = description
        if self.bar is None:
            if not self.due():
                return
            self._start()
        if reset:
            self.bar.reset(self.task, description=self.description)
        self.bar.update(self.task, completed=self.completed, total=self.total, description=self.description)

    def due(self) -> bool:
        """Whether the bar is to be drawn: once a total reaches ``min_total`` (always without it) and ``after_s``
        seconds have passed."""
        if self.min_total and (self.total is None or self.total < self.min_total):
            return False
        return not self.after_s or self.clock() - self.started >= self.after_s

    def _start(self) -> None:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn)

        columns: tuple[Any, ...]
        if self.total is None:
            columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
        else:
            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self.bar = Progress(*columns, console=self.console, transient=True)
        self.bar.start()
        self.task = self.bar.add_task(self.description, total=self.total)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def enabled(target: Any, quiet: bool) -> bool:
    """Whether :func:`progress` draws on ``target``: not ``quiet``, and ``target`` (a stream, or a rich
    ``Console``'s file) is a terminal. A rich ``Console`` made with ``quiet=True`` draws nothing either."""
    if quiet or target is None:
        return False
    if hasattr(target, "is_terminal"):  # a rich Console
        return bool(target.is_terminal) and not getattr(target, "quiet", False)
    isatty = getattr(target, "isatty", None)
    return bool(isatty and isatty())


def bar_on(target: TextIO | Any, total: int | None, description: str, min_total: int = 0, *,
           after_s: float = 0.0, clock: Callable[[], float] = time.monotonic) -> RichBar:
    """A :class:`RichBar` on ``target`` (a stream or a rich ``Console``) for a caller that checked
    :func:`enabled` and calls :meth:`RichBar.stop` itself (a bar that spans several calls)."""
    if hasattr(target, "is_terminal"):
        console = target
    else:
        from rich.console import Console

        console = Console(file=target)
    return RichBar(console, total, description, min_total, after_s=after_s, clock=clock)


@contextlib.contextmanager
def progress(target: TextIO | Any, quiet: bool, total: int | None, description: str, *,
             min_total: int = 0, after_s: float = 0.0, clock: Callable[[], float] = time.monotonic
             ) -> Iterator[NullBar]:
    """A bar (``total`` a number) or status line (``total=None``) on ``target`` for the block; a
    :class:`NullBar` when :func:`enabled` says no. ``min_total``: draw only once the total reaches it;
    ``after_s``: only from that many seconds after the start (``clock``)."""
    if not enabled(target, quiet):
        yield NullBar()
        return
    bar = bar_on(target, total, description, min_total, after_s=after_s, clock=clock)
    if bar.due():
        bar.update()
    try:
        yield bar
    finally:
        bar.stop()


HEARTBEAT_S = 30.0


class Heartbeat:
    """A plain line on ``stream`` every ``every_s`` seconds while work goes on, for output that is not a terminal
    (a pipe, a CI log) where no bar is drawn: ``text(elapsed_seconds)`` gives the line (``"mpsready run: torch
    2.3 still running (60 s)"``). A daemon thread writes it; :meth:`stop` ends it. ``clock`` returns seconds; tests
    call :meth:`beat` with a fake one instead of waiting."""

    def __init__(self, stream: TextIO, text: Callable[[float], str], every_s: float = HEARTBEAT_S, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        import threading

        self.stream, self.text, self.every_s, self.clock = stream, text, every_s, clock
        self.started = clock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="mpsready-heartbeat", daemon=True)

    def _loop(self) -> None:
        while not self.done.wait(self.every_s):
            self.beat()

    def beat(self) -> None:
        try:
            self.stream.write(self.text(self.clock() - self.started) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # the pipe closed: nobody is reading any more
            self.done.set()

    def start(self) -> "Heartbeat":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.done.set()
        if self.thread.is_alive():
            self.thread.join()


def heartbeat_wanted(stream: Any, quiet: bool) -> bool:
    """Whether a :class:`Heartbeat` is written: not ``quiet`` and ``stream`` is not a terminal (a terminal gets a bar
    or status line instead)."""
    return not quiet and stream is not None and not enabled(stream, quiet)


@contextlib.contextmanager
def waiting(stream: TextIO, quiet: bool, description: str, *, every_s: float = HEARTBEAT_S,
            clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """For one wait of unknown length: on a terminal a transient status line (a spinner, ``description`` and the
    elapsed time, redrawn by rich itself); elsewhere a plain ``description (still running, N s)`` line every ``every_s``
    seconds; nothing with ``quiet``."""
    if heartbeat_wanted(stream, quiet):
        beat = Heartbeat(stream, lambda s: f"{description} (still running, {s:.0f} s)", every_s, clock=clock).start()
        try:
            yield
        finally:
            beat.stop()
        return
    with progress(stream, quiet, None, description, clock=clock):
        yield

"""Exit codes and the errors that map to them."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Linter-style exit codes used by every subcommand."""

    OK = 0  # nothing at or above the threshold
    FINDINGS = 1  # findings at or above the threshold (or a comparison out of tolerance)
    USAGE = 2  # usage or input error
    INTERNAL = 3  # an unexpected exception inside mpsready (a bug): one line, the traceback with -v


class UsageError(Exception):
    """A bad command line or unreadable input; the CLI prints it and exits with 2."""

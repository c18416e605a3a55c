"""Where the user's step prints go while mpsready runs it: stderr, so stdout holds only mpsready's output."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what the user's step prints to stderr while it runs, so stdout holds only mpsready's own
    output (`mpsready trace ENTRY --format json > t.json` stays valid JSON when the model prints, as
    nanoGPT's does; `mpsready check` keeps the report apart). Both Python's ``sys.stdout`` and file
    descriptor 1 (C extensions) move; both are restored on exit, also when the step raises."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1 (embedded interpreters): Python-level only
        saved = None
    try:
        if saved is not None:
            os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)

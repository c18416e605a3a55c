"""Issue 39 item 4: ``migrate --verify`` on several releases runs them as one release matrix and passes each
release's start and end on as a ``verify:`` progress line, keeping the rest of the matrix's stderr for the
report."""

from __future__ import annotations

import collections
import os

from mpsready.migrate.verify_matrix import _pass_on


def test_release_start_and_end_lines_are_passed_on_and_the_rest_kept():
    read_fd, write_fd = os.pipe()
    os.write(write_fd, (b"mpsready run: 2 release(s) (2.3.1, 2.13.0), 2 at a time\n"
                        b"  torch 2.3: started\n  torch 2.13: started\n"
                        b"  torch 2.3: step 2, 140 ops judged (30 s)\n"
                        b"  torch 2.3: ended, completed (4.1 s)\n  torch 2.13: ended, failed (3.9 s)\n"
                        b"run matrix: /tmp/x/run-matrix.json\n"))
    os.close(write_fd)
    said: list[str] = []
    tail: collections.deque = collections.deque(maxlen=400)
    _pass_on(read_fd, tail, said.append)
    assert said == ["verify: emulated Mac, torch 2.3: started", "verify: emulated Mac, torch 2.13: started",
                    "verify: emulated Mac, torch 2.3: ended, completed (4.1 s)",
                    "verify: emulated Mac, torch 2.13: ended, failed (3.9 s)"]
    assert len(tail) == 7 and tail[-1] == "run matrix: /tmp/x/run-matrix.json\n"

"""Several :func:`mpsready.childproc.run_group` calls at a time (a release matrix runs one per CPU): the first to
end used to SIGKILL the others' children as 'adopted orphans' (every release after the first two of ``--torch all``
ended ``no_result``, child status -9)."""

from __future__ import annotations

import sys
import threading

import pytest

from mpsready import childproc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's (prctl)")
def test_a_child_that_ends_first_does_not_end_the_other_threads_children():
    results: dict[str, tuple[int, bool]] = {}

    def one(name: str, code: str) -> None:
        results[name] = childproc.run_group([sys.executable, "-c", code], env={}, timeout=60)

    slow = threading.Thread(target=one, args=("slow", "import time; time.sleep(1.5); raise SystemExit(7)"))
    slow.start()
    fast = [threading.Thread(target=one, args=(f"fast{i}", "raise SystemExit(3)")) for i in range(3)]
    for t in fast:
        t.start()
    for t in (*fast, slow):
        t.join(90)
    assert results == {"slow": (7, False), "fast0": (3, False), "fast1": (3, False), "fast2": (3, False)}
    assert childproc.LIVE == set()

"""``migrate --verify`` on several releases (the default ``2.3,2.13``): the emulated-Mac runs of the migrated copy
as one release matrix (``mpsready run --torch A,B``, :mod:`mpsready.run.matrix`), so that PyTorch, the tables and
the emulator are loaded once and each release's child is forked from one zygote (:mod:`mpsready.run.zygote`,
issue 39), instead of one whole ``mpsready run`` per release. Each release's run document is read out of the
matrix document and judged as a single run's is (:func:`mpsready.migrate.verify.mac_result`); the matrix's
per-release progress lines (started, ended) are passed on as ``verify:`` lines while it runs."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from mpsready import childproc


def mac_runs(cwd: Path, argv: list[str], releases: list[str], max_steps: int, time_limit: float, out: Path,
             tell: Callable[[str], None]) -> list:
    """One :class:`~mpsready.migrate.verify.MacRun` per release of ``releases`` (in that order), from one
    ``mpsready run --torch A,B,...`` of ``argv`` in ``cwd``; its documents are written under ``out``."""
    from mpsready.migrate.verify import mac_result

    doc_path = out / "run-matrix.json"
    cmd = [sys.executable, "-m", "mpsready", "run", "--torch", ",".join(releases), "--format", "json", "-o",
           str(doc_path)]
    if max_steps:
        cmd += ["--max-steps", str(max_steps)]
    if time_limit:
        cmd += ["--time-limit", str(time_limit)]
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""
    limit = (time_limit or 3600) * len(releases) + 120
    read_fd, write_fd = os.pipe()
    tail: collections.deque[str] = collections.deque(maxlen=400)
    reader = threading.Thread(target=_pass_on, args=(read_fd, tail, tell), daemon=True)
    reader.start()
    try:
        rc, timed_out = childproc.run_group([*cmd, "--", *argv], env=env, cwd=str(cwd), stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=write_fd, timeout=limit)
    finally:
        os.close(write_fd)
        reader.join(10)
    stderr = "".join(tail)[-8000:]
    try:
        doc = json.loads(doc_path.read_text())
        entries = {str(e.get("torch_requested")): e for e in doc.get("releases") or [] if isinstance(e, dict)}
    except (OSError, ValueError, AttributeError):
        entries = {}
    runs = []
    for release in releases:
        entry: dict[str, Any] = entries.get(release) or {}
        path = out / f"run-{release}.json"
        if isinstance(entry.get("run"), dict):
            path.write_text(json.dumps(entry["run"]))
        status = entry.get("child_status", rc)
        text = (entry.get("output") or {}).get("text") or stderr
        runs.append(mac_result(cwd, release, path, status if isinstance(status, int) else rc, timed_out, text,
                               limit - 120 if time_limit else 0))
    return runs


def _pass_on(fd: int, tail: collections.deque, tell: Callable[[str], None]) -> None:
    """Read the matrix's stderr: keep its last lines, pass each release's ``torch X: started`` / ``ended`` on."""
    with os.fdopen(fd, "r", errors="replace") as fh:
        for line in fh:
            tail.append(line)
            words = line.strip()
            if words.startswith("torch ") and (words.endswith(": started") or ": ended, " in words):
                tell(f"verify: emulated Mac, {words}")

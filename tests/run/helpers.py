"""Run a script under the emulated Mac in this test process (the CLI runs it in a child; same code path)."""
from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import sys
import warnings
from pathlib import Path


def emulate(script: Path, torch: str = "2.13", macos: str = "15.5", fallback: bool = False, argv=(),
            keep_going: bool = False, max_steps=None, time_limit=None, root: Path | None = None,
            nan_check: bool = True, machine: str = "arm64"):
    """``(result, document, stdout, stderr)`` of ``script`` run by :func:`mpsready.run.child.run` (the project's
    root: ``root``, else the script's folder)."""
    from mpsready.run.child import run
    from mpsready.run.document import build_document

    spec = {"program": {"kind": "script", "target": str(script), "argv": [str(script), *argv],
                        "root": str(root or script.parent)},
            "target": {"torch": torch, "macos": macos, "fallback": fallback, "machine": machine},
            "keep_going": keep_going, "max_steps": max_steps, "time_limit": time_limit, "nan_check": nan_check}
    saved_argv, saved_path = list(sys.argv), list(sys.path)
    method = multiprocessing.get_start_method(allow_none=True)
    saved_env = os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK")
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("default")
            result = run(spec)
    finally:
        sys.argv[:], sys.path[:] = saved_argv, saved_path
        multiprocessing.set_start_method(method, force=True)
        if saved_env is None:
            os.environ.pop("PYTORCH_ENABLE_MPS_FALLBACK", None)
        else:
            os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = saved_env
    # warnings as Python prints them to stderr outside a test run
    shown = "".join(f"{w.category.__name__}: {w.message}\n" for w in seen)
    return result, build_document(spec, result), out.getvalue(), err.getvalue() + shown


def write(tmp_path: Path, text: str, name: str = "script.py") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (exists and is no zombie), read from /proc: what a test of the lifetime of a
    run's children (orphans, daemons, the zygote's jobs) asks after the run ended."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False

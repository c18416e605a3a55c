"""``mpsready run --torch 2.3,2.6,2.13 -- PROGRAM`` (or ``--torch all``): the program once per release.

Each release runs in its own ``python -m mpsready.run.child SPEC.json``, the child of a single ``mpsready
run``, at most ``min(os.cpu_count(), number of releases)`` at a time. A child's stdout and stderr go to one
file of its own (interleaved as the child wrote them, never mixed with another release's); the file is
shown, as its last :data:`TAIL_LINES` lines, only for a release that did not end cleanly (exit code not 0),
and in full for every release with ``--show-output``.

The result document ``mpsready.run_matrix`` (schema version 1, JSON Schema in
``data/run_matrix.schema.json``), every value predicted:

* ``basis`` ``"emulated"``, ``basis_class`` ``"predicted"``; ``target`` {``torch_requested`` (the
  ``--torch`` text), ``macos``, ``fallback``}; ``program`` {kind, target, argv}; ``settings``;
* ``releases``: one entry per release, oldest first: ``torch`` (the table release, e.g. ``"2.3.1"``),
  ``torch_requested`` (as listed, e.g. ``"2.3"``), ``outcome`` (a run outcome, or ``no_result`` when the
  child ended without writing its document: killed, or an abort outside Python), ``exit_code`` (that
  release's own ``mpsready run`` code), ``first_failure`` (``kind``, ``op``, ``dtype``, ``exception``,
  ``location``, ``mac``, ``fixed_in``; or null), ``fallback_ops`` and ``fallback_calls`` (CPU fallbacks),
  ``seconds`` (the program's time, the run document's; null without one), ``wall_seconds`` (the whole child,
  interpreter start included), ``child_status``, ``output`` {``lines``, ``shown`` (``"tail"`` |
  ``"all"`` | ``"none"``), ``text``}, and ``run``: the release's whole ``mpsready.run`` document, or null;
* ``summary``: ``releases`` (in order), ``by_outcome`` {outcome: [releases]}, ``first_completing``: the
  oldest release whose run ended with exit code 0 (outcome ``completed``, or ``stopped`` at ``--max-steps``/
  ``--time-limit`` with no predicted failure), or null;
* ``exit_code``: :func:`matrix_exit_code`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from mpsready import childproc
from mpsready.errors import UsageError
from mpsready.schema import envelope
from mpsready import versions

SCHEMA = "mpsready.run_matrix"
VERSION = 1
NO_RESULT = "no_result"
TAIL_LINES = 40
ALL = "all"


def is_matrix(torch_arg: str | None) -> bool:
    """Whether ``--torch`` asks for several releases: ``all`` or a comma-separated list (``"2.5"`` does not)."""
    return torch_arg is not None and (torch_arg.strip() == ALL or "," in torch_arg)


def parse_releases(torch_arg: str) -> list[tuple[str, str]]:
    """``"2.3,2.13"`` -> ``[("2.3", "2.3.1"), ("2.13", "2.13.0")]``: (as requested, shipped table release), oldest
    first, duplicates (two names of one table, ``2.3,2.3.1``) collapsed to the first spelling. ``"all"``: every
    shipped minor release, its newest shipped patch (``shipped_versions()``). Raises :class:`UsageError` naming
    the release that has no table or is not a version (``--torch 2.3,foo``, ``--torch 1.0``) or an empty entry."""
    from mpsready.ops import api as ops_api

    text = torch_arg.strip()
    if text == ALL:
        newest: dict[tuple[int, ...], str] = {}
        for rel in ops_api.shipped_versions():  # oldest first: the last of each minor is its newest patch
            newest[versions.release(rel)[:2]] = rel
        return [(rel, rel) for rel in newest.values()]
    seen: dict[str, str] = {}
    for word in text.split(","):
        word = word.strip()
        if not word:
            raise UsageError(f"--torch {torch_arg!r}: an empty release in the list (write e.g. --torch 2.3,2.13)")
        if word == ALL:
            raise UsageError(f"--torch {torch_arg!r}: 'all' stands alone (--torch all)")
        try:
            rel = ops_api.resolve_version(word)
        except ValueError as exc:
            raise UsageError(f"--torch release {word!r}: {exc}") from None
        seen.setdefault(rel, word)
    return sorted(((req, rel) for rel, req in seen.items()), key=lambda p: versions.release(p[1]))


@dataclass
class ReleaseRun:
    """One child's result: ``doc`` its run document (None when it wrote none), ``status`` its exit status,
    ``output`` its stdout and stderr together, ``seconds`` its wall time."""

    requested: str
    release: str
    doc: dict[str, Any] | None
    status: int
    output: str
    seconds: float
    timed_out: bool = False
    forked: bool = False  # forked from the zygote (else a fresh interpreter)

    @property
    def exit_code(self) -> int:
        """That release's ``mpsready run`` exit code: the document's, else 2 (the child refused its spec) or 3."""
        if self.doc is not None:
            return int(self.doc["exit_code"])
        return 2 if self.status == 2 else 3

    @property
    def outcome(self) -> str:
        return self.doc["outcome"] if self.doc is not None else NO_RESULT


def default_jobs(n_releases: int) -> int:
    """Children at a time: the machine's CPUs, at most one per release."""
    return max(1, min(os.cpu_count() or 1, n_releases))


def run_releases(releases: list[tuple[str, str]], make_spec: Callable[[str, str], dict[str, Any]],
                 env: dict[str, str], jobs: int | None = None,
                 progress: Callable[[ReleaseRun], None] | None = None, fork: bool | None = None,
                 macos: str = "15.5", fallback: bool = False, shared: Any = None, cwd: str | None = None,
                 timeout: float | None = None, tmp_dir: str | None = None) -> list[ReleaseRun]:
    """Run the child once per ``(requested, release)``, ``jobs`` at a time; results in the order given.
    ``make_spec(requested, out_path)`` gives the child's spec (``out`` set to ``out_path``). ``fork`` (default:
    :func:`mpsready.run.zygote.available`): each child forked from one zygote that imported torch and loaded the
    tables once (:mod:`mpsready.run.zygote`); otherwise, or where the zygote does not start, a fresh interpreter
    per release; the zygote loads what each release's emulated Mac (``macos``, ``fallback``) reads before forking.
    ``shared``: a started :class:`~mpsready.run.zygote.Zygote` of the caller's (``migrate --verify``: one for
    all its runs), used instead of one of this call's own and left running; each child then gets ``env`` (as
    :func:`mpsready.childproc.child_env` gives it) and ``cwd``. ``timeout``: seconds per child, after which its
    group is killed (``timed_out``). The children's files go to a temporary folder under ``tmp_dir``."""
    from mpsready.run import zygote

    jobs = jobs or default_jobs(len(releases))
    lock = threading.Lock()
    stopping = threading.Event()  # interrupted: no child starts any more (none falls back to a spawned one)
    with tempfile.TemporaryDirectory(prefix="mpsready-matrix-", dir=tmp_dir) as tmp:
        zyg = shared
        forking = zyg is not None or (zygote.available() if fork is None else fork)
        adopted = childproc.adopt_orphans() if forking else None  # what the monitors adopted: _end_interrupted
        if zyg is None and forking:
            zyg = zygote.Zygote([rel for _req, rel in releases], env, os.path.join(tmp, "zygote.log"), cleanup=[tmp],
                                macos=macos, fallback=fallback)
            if not zyg.start():
                zyg = None

        def launch(spec_path: str, output: str) -> tuple[int, bool, bool]:
            if zyg is not None and not stopping.is_set():
                job: dict[str, Any] = {"spec": spec_path, "output": output, "timeout": timeout}
                if shared is not None:
                    job.update(env=childproc.child_env(env), cwd=cwd)
                try:
                    return (*zyg.run_job(job), True)
                except zygote.ZygoteGone:
                    pass  # the spawned path below, as before issue 39
            if stopping.is_set():
                return -9, False, False
            with open(output, "wb") as log:
                # the child's import path and lifetime as a single run's (mpsready.childproc)
                return (*childproc.run_group(
                    childproc.command(sys.executable, "mpsready.run.child", [spec_path]),
                    env=childproc.child_env(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, timeout=timeout), False)

        def one(item: tuple[str, str]) -> ReleaseRun:
            requested, release = item
            base = os.path.join(tmp, f"torch-{release}")
            spec = make_spec(requested, base + ".result.json")
            with open(base + ".spec.json", "w", encoding="utf-8") as fh:
                json.dump(spec, fh)
            t0 = time.perf_counter()
            returncode, timed_out, forked = launch(base + ".spec.json", base + ".output.txt")
            seconds = time.perf_counter() - t0
            output = _read_output(base + ".output.txt")
            doc = None
            if os.path.exists(spec["out"]):
                with open(spec["out"], encoding="utf-8") as fh:
                    doc = json.load(fh)
            rr = ReleaseRun(requested, release, doc, returncode, output, round(seconds, 3), timed_out, forked)
            if progress is not None:
                with lock:
                    progress(rr)
            return rr

        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            return list(pool.map(one, releases))
        except BaseException:  # a signal in the waiting thread: end the children now, not when they are done
            stopping.set()
            _end_interrupted(zyg, adopted)
            raise
        finally:
            pool.shutdown(wait=True)
            if zyg is not None and shared is None:
                zyg.close()


def _end_interrupted(zyg: Any, adopted: set[int] | None) -> None:
    """End every release of an interrupted matrix at once: the zygote's group (its monitors; the jobs end by their
    watchdog and death signal), the spawned children's groups (``MPSREADY_ZYGOTE=0``: their threads then return), and
    what the killed monitors had adopted (a ``setsid`` daemon of a program), adopted by this process in turn."""
    if zyg is not None:
        zyg.close()
    with childproc.LIVE_LOCK:
        for pid in list(childproc.LIVE):
            childproc.kill_group(pid)
    if adopted is not None:
        childproc.end_adopted(adopted)


def _read_output(path: str) -> str:
    """A child's stdout and stderr; empty when it never started (interrupted)."""
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def matrix_exit_code(runs: list[ReleaseRun]) -> int:
    """1 when any release has a predicted Mac failure; otherwise 3 (a child ended without a result), 2 (a run was
    inconclusive) or 4 (a run was ``unverified``: a call judged on no data), in that order; 0 when every release
    completed (or stopped at a limit) with no predicted failure."""
    codes = [r.exit_code for r in runs]
    for code in (1, 3, 2, 4):  # failure, no result, inconclusive, unverified: the worst release decides
        if code in codes:
            return code
    return max(codes, default=0)


def first_completing(runs: list[ReleaseRun]) -> str | None:
    """The oldest release whose run ended with exit code 0, or None (an ``unverified`` run, exit code 4, is not
    one: a release judged on no data is never named as the first that works)."""
    return next((r.release for r in runs if r.exit_code == 0), None)


def _first_failure(doc: dict[str, Any] | None) -> dict[str, Any] | None:
    ff = doc.get("first_failure") if doc else None
    if not ff:
        return None
    from mpsready.run.document import is_mac_failure

    return {"kind": ff.get("kind"), "op": ff.get("op"), "dtype": ff.get("dtype"), "exception": ff.get("exception"),
            "location": ff.get("location"), "mac": is_mac_failure(ff), "fixed_in": ff.get("fixed_in")}


def _output_entry(r: ReleaseRun, show_all: bool) -> dict[str, Any]:
    lines = r.output.splitlines()
    if show_all:
        return {"lines": len(lines), "shown": "all", "text": r.output}
    if r.exit_code != 0:
        tail = lines[-TAIL_LINES:]
        return {"lines": len(lines), "shown": "tail", "text": "\n".join(tail) + ("\n" if tail else "")}
    return {"lines": len(lines), "shown": "none", "text": None}


def build_matrix_document(runs: list[ReleaseRun], torch_requested: str, target: dict[str, Any],
                          program: dict[str, Any], settings: dict[str, Any], show_output: bool = False
                          ) -> dict[str, Any]:
    """The ``mpsready.run_matrix`` document (module docstring); ``target`` holds ``macos`` and ``fallback``."""
    from mpsready.run.document import LIMITS

    releases = []
    by_outcome: dict[str, list[str]] = {}
    for r in runs:
        fbs = r.doc["fallbacks"] if r.doc else []
        releases.append({"torch": r.release, "torch_requested": r.requested, "outcome": r.outcome,
                         "exit_code": r.exit_code, "first_failure": _first_failure(r.doc),
                         "fallback_ops": len(fbs), "fallback_calls": sum(fb["calls"] for fb in fbs),
                         "seconds": r.doc["seconds"] if r.doc else None, "wall_seconds": r.seconds,
                         "child_status": r.status,
                         "output": _output_entry(r, show_output), "run": r.doc})
        by_outcome.setdefault(r.outcome, []).append(r.release)
    return envelope(
        SCHEMA, VERSION, basis="emulated", basis_class="predicted",
        target={"torch_requested": torch_requested, "macos": target["macos"], "fallback": bool(target["fallback"])},
        program={k: v for k, v in program.items() if k != "root"},
        settings=settings,
        releases=releases,
        summary={"releases": [r.release for r in runs], "by_outcome": by_outcome,
                 "first_completing": first_completing(runs)},
        exit_code=matrix_exit_code(runs),
        limits=list(LIMITS),
    )

"""``migrate --verify``'s runs, every one forked from one warm process (issue 39): the two CPU runs (the original
and the migrated copy, and the original again for its run-to-run spread) and the emulated Mac's, one per release.

:class:`Runner` launches one zygote (:mod:`mpsready.run.zygote`) as soon as the temporary folder exists, so that
PyTorch, the emulator and each release's tables load while the copies are made; then each run is a job forked from
it: a CPU run is a plain ``python SCRIPT ARGS`` / ``python -m MODULE ARGS`` (:mod:`mpsready.run.plain`, with the
``sitecustomize`` of :data:`SITE` on its ``PYTHONPATH`` as before), an emulated Mac run is ``mpsready run``'s child
(:mod:`mpsready.run.child`, the release matrix's path: :func:`mpsready.run.matrix.run_releases`, several releases
at a time). Every run keeps what it had as a process of its own (tested in ``tests/migrate/test_verify_zygote.py``):
its environment, working folder and ``sys.path``, a session and process group of its own, killed at its deadline,
after it ends (what it left running) and when ``mpsready migrate`` dies (then the copies are removed too).

A command that is not this interpreter running a script or a module (``bash run.sh``, ``python -u train.py``), a
program folder holding a module only mpsready's zygote imported (:func:`mpsready.run.plain.shadowed`), a platform
without the zygote (not Linux, ``MPSREADY_ZYGOTE=0``) or a zygote that does not start: that run is a fresh process,
as before issue 39.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from mpsready import childproc

# Installed in both CPU runs through PYTHONPATH: the same seeds, a step limit and a digest of the parameters.
SITE = '''\
import atexit, hashlib, json, os, random, shutil, signal, threading, time


def _mpsready_watch():
    # The run's deadline, kept by the child itself, and its parent's death (the read end of a pipe only the
    # parent writes to reaches end of file): either ends the whole process group and removes the copies.
    fd = os.environ.pop("MPSREADY_PARENT_FD", None)
    cleanup = json.loads(os.environ.pop("MPSREADY_PARENT_CLEANUP", "null") or "null") or []
    deadline = float(os.environ.pop("MPSREADY_VERIFY_DEADLINE", "0") or 0)
    if fd is None or os.getpgrp() != os.getpid():
        return

    def end(*_args):
        for path in cleanup:
            shutil.rmtree(path, ignore_errors=True)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    signal.signal(signal.SIGTERM, end)  # the parent's death signal (PR_SET_PDEATHSIG) ends the group

    def wait():
        try:
            while os.read(int(fd), 1024):
                pass
        except OSError:
            pass
        end()

    threading.Thread(target=wait, daemon=True).start()
    if deadline:
        t = threading.Timer(max(0.0, deadline - time.time()), end)
        t.daemon = True
        t.start()


_mpsready_watch()
_limit = int(os.environ.get("MPSREADY_VERIFY_MAX_STEPS") or 0)
_out = os.environ.get("MPSREADY_VERIFY_DIGEST")
random.seed(0)
try:
    import numpy
    numpy.random.seed(0)
except Exception:
    numpy = None
try:
    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook
except Exception:
    torch = None
if torch is not None:
    torch.manual_seed(0)
    _optimizers, _steps = [], [0]

    def _after_step(optimizer, args, kwargs):
        if not any(o is optimizer for o in _optimizers):
            _optimizers.append(optimizer)
        _steps[0] += 1
        if _limit and _steps[0] >= _limit:
            raise SystemExit(0)

    register_optimizer_step_post_hook(_after_step)

    def _digest():
        h, count, norms = hashlib.sha256(), 0, []
        for o in _optimizers:
            for group in o.param_groups:
                for p in group["params"]:
                    t = p.detach().cpu().contiguous()
                    count += t.numel()
                    norms.append(float(t.double().norm()))
                    if numpy is not None and t.dtype != torch.bfloat16:
                        h.update(t.numpy().tobytes())
                    else:
                        h.update(repr(t.double().flatten().tolist()).encode())
        if _out:
            with open(_out, "w") as f:
                json.dump({"steps": _steps[0], "parameters": count, "sha256": h.hexdigest(), "norms": norms}, f)

    atexit.register(_digest)
'''


MAX_OUTPUT = 16 * 1024 * 1024  # bytes of a run's stdout kept for the comparison
MAC_GRACE_S = 120.0  # seconds past the time limit before an emulated Mac run is killed


def python_argv(argv: list[str]) -> list[str]:
    """``python``/``python3`` at the head of the command is this interpreter (the one with mpsready and torch)."""
    if argv and Path(argv[0]).name in ("python", "python3", Path(sys.executable).name):
        return [sys.executable, *argv[1:]]
    return list(argv)


class Runner:
    """The runs of one ``--verify`` (module docstring); :meth:`close` at the end ends the zygote."""

    def __init__(self, base: Path, releases: list[str]):
        from mpsready.ops import api as ops_api
        from mpsready.run import zygote

        self.base = base
        self.fallback = os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") == "1"  # as mpsready run reads it
        self.releases: list[tuple[str, str]] = []  # (as requested, table release)
        self.bad: dict[str, str] = {}  # as requested -> why there is no table
        for req in dict.fromkeys(releases):
            try:
                self.releases.append((req, ops_api.resolve_version(req)))
            except ValueError as exc:
                self.bad[req] = str(exc)
        self.zygote: Any = None
        self.forked = 0  # runs forked from the zygote (the others were fresh processes)
        self._ready: bool | None = None
        if zygote.available():
            from mpsready.defaults import DEFAULT_MACOS

            env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")  # the CPU runs' hash secret
            zyg = zygote.Zygote(sorted({rel for _req, rel in self.releases}), env, str(base / "zygote.log"),
                                cleanup=[str(base)], macos=DEFAULT_MACOS, fallback=self.fallback, plain=True)
            if zyg.launch():
                self.zygote = zyg
        # interrupted, closing the zygote kills its monitors before they end what their run left in a new session (a
        # setsid daemon): this process adopts those orphans, and :meth:`close` ends them
        self._adopted = childproc.adopt_orphans() if self.zygote is not None else None

    def ready(self) -> Any:
        """The zygote once it has loaded, or ``None`` (every run a fresh process then)."""
        if self.zygote is not None and self._ready is None:
            self._ready = bool(self.zygote.ready())
            if not self._ready:
                self.zygote = None
        return self.zygote

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None
        if self._adopted is not None:
            childproc.end_adopted(self._adopted)
            self._adopted = None

    def cpu(self, cwd: Path, argv: list[str], site: Path, max_steps: int, time_limit: float) -> Any:
        """One CPU run (a :class:`~mpsready.migrate.verify.CpuRun`), forked when it can be, else a fresh process
        in a process group of its own (:func:`mpsready.childproc.run_group`); either way the group is killed on the
        deadline (kept by the run's own watchdog in :data:`SITE` too), after the program exits (what it left
        running) and when this process dies (the copies are removed then too)."""
        from mpsready.run import zygote

        digest = Path(tempfile.mkstemp(prefix="digest-", suffix=".json", dir=site)[1])
        digest.unlink()
        env = dict(os.environ)
        env.update({"CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0", "MPSREADY_VERIFY_MAX_STEPS": str(max_steps),
                    "MPSREADY_VERIFY_DIGEST": str(digest), childproc.CLEANUP: json.dumps([str(self.base)]),
                    "MPSREADY_VERIFY_DEADLINE": str(time.time() + time_limit + 5) if time_limit else "0",
                    "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])})
        plain = self._plain(cwd, argv, env, site)
        if plain is not None:
            out, err = (tempfile.mkstemp(prefix=f"cpu-{name}-", dir=self.base) for name in ("out", "err"))
            for fd, _path in (out, err):
                os.close(fd)
            try:
                rc, timed_out = self.zygote.run_job({"plain": plain, "stdout": out[1], "stderr": err[1], "env": env,
                                                     "cwd": str(cwd), "timeout": time_limit or None})
            except zygote.ZygoteGone:
                plain = None
            else:
                self.forked += 1
                with open(out[1], "rb") as fo, open(err[1], "rb") as fe:
                    return _cpu_result(cwd, rc, timed_out, fo, fe, digest)
            finally:
                for _fd, path in (out, err):
                    os.unlink(path)
        with tempfile.TemporaryFile(dir=self.base) as fo, tempfile.TemporaryFile(dir=self.base) as fe:
            rc, timed_out = childproc.run_group(python_argv(argv), env=env, cwd=str(cwd), stdin=subprocess.DEVNULL,
                                                stdout=fo, stderr=fe, timeout=time_limit or None)
            return _cpu_result(cwd, rc, timed_out, fo, fe, digest)

    def _plain(self, cwd: Path, argv: list[str], env: dict[str, str], site: Path) -> dict[str, Any] | None:
        """The plain job (:func:`mpsready.run.plain.run`) of ``argv``, or ``None`` when it runs as a fresh process
        (module docstring)."""
        from mpsready.run.plain import shadowed

        words = python_argv(argv)
        if len(words) < 2 or words[0] != sys.executable or self.ready() is None or \
                not self.zygote.loaded.get("plain"):
            return None
        if words[1] == "-m" and len(words) > 2:
            spec, first = {"kind": "module", "target": words[2], "args": words[3:]}, str(cwd)
        elif not words[1].startswith("-") and (cwd / words[1]).is_file():
            spec = {"kind": "script", "target": words[1], "args": words[2:]}
            first = os.path.dirname(os.path.realpath(cwd / words[1]))
        else:
            return None
        entries = [os.path.join(cwd, p) for p in env["PYTHONPATH"].split(os.pathsep) if p and p != str(site)]
        loaded = self.zygote.loaded
        if shadowed([first], loaded.get("extra", [])) or shadowed(entries, loaded.get("preloaded", [])):
            return None
        return spec

    def mac(self, cwd: Path, argv: list[str], max_steps: int, time_limit: float, out: Path,
            tell: Callable[[str], None]) -> list:
        """One :class:`~mpsready.migrate.verify.MacRun` per release (in the order asked) of the migrated copy
        ``cwd`` running ``argv``: ``mpsready run``'s child per release, forked from the zygote (or fresh), several
        at a time; each release's ``started`` / ``ended`` line goes to ``tell``; run documents under ``out``."""
        from mpsready.errors import UsageError
        from mpsready.migrate.verify import MacRun, mac_result
        from mpsready.run import matrix
        from mpsready.run.cli import DEFAULT_TIME_LIMIT
        from mpsready.run.command import parse_program

        asked = list(self.bad) + [req for req, _rel in self.releases]
        try:
            prog = parse_program(list(argv), cwd=str(cwd))
        except UsageError as exc:
            return [MacRun(req, "no run document", False, reason=f"mpsready run exited 2 without a run document: "
                           f"mpsready run: error: {exc}") for req in asked]
        from mpsready.defaults import DEFAULT_MACOS

        def make_spec(req: str, out_path: str) -> dict[str, Any]:
            tell(f"verify: emulated Mac, torch {req}: started")
            return {"program": {**prog.to_dict(), "root": prog.root},
                    "target": {"torch": req, "macos": DEFAULT_MACOS, "fallback": self.fallback},
                    "keep_going": False, "max_steps": max_steps or None, "time_limit": time_limit or DEFAULT_TIME_LIMIT,
                    "time_limit_default": not time_limit, "out": out_path, "nan_check": True}

        def ended(rr: matrix.ReleaseRun) -> None:
            tell(f"verify: emulated Mac, torch {rr.requested}: ended, {rr.outcome} ({rr.seconds:.1f} s)")

        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTORCH_ENABLE_MPS_FALLBACK="1" if self.fallback else "0")
        env[childproc.CLEANUP] = json.dumps([str(self.base)])
        once: dict[str, tuple[str, str]] = {}
        for req, rel in self.releases:  # two names of one table (2.3, 2.3.1): run once
            once.setdefault(rel, (req, rel))
        zyg = self.ready()
        limit = (time_limit or 3600) + MAC_GRACE_S
        runs = matrix.run_releases(list(once.values()), make_spec, env, progress=ended, fork=zyg is not None,
                                   shared=zyg, cwd=str(cwd), timeout=limit, tmp_dir=str(out))
        self.forked += sum(rr.forked for rr in runs)
        by_release = {rr.release: rr for rr in runs}
        result = {req: MacRun(req, "no run document", False, reason=f"mpsready run exited 2 without a run document: "
                              f"mpsready run: error: --torch release {req!r}: {why}") for req, why in self.bad.items()}
        for req, rel in self.releases:
            rr = by_release[rel]
            path = out / f"run-{req}.json"
            if rr.doc is not None:
                path.write_text(json.dumps(rr.doc))
            result[req] = mac_result(cwd, req, path, rr.status, rr.timed_out, rr.output[-8000:], time_limit)
        return [result[req] for req in asked if req in result]


def _cpu_result(cwd: Path, rc: int, timed_out: bool, out: Any, err: Any, digest: Path) -> Any:
    """The :class:`~mpsready.migrate.verify.CpuRun` of a run that ended: its stdout and stderr (files at their end),
    the digest its ``sitecustomize`` wrote."""
    from mpsready.migrate.verify import CpuRun, traceback_line

    out.seek(0)
    stdout = out.read(MAX_OUTPUT).decode(errors="replace")
    err.seek(max(0, os.fstat(err.fileno()).st_size - 8000))
    stderr = err.read().decode(errors="replace")[-2000:]
    run = CpuRun(None if timed_out else rc, stdout, "" if timed_out else stderr, timed_out=timed_out,
                 line=traceback_line(stderr, str(cwd)) if rc and not timed_out else None)
    try:
        data = json.loads(digest.read_text())
        run.steps, run.parameters = int(data["steps"]), int(data["parameters"])
        run.sha256 = str(data["sha256"]) if data["steps"] else None
        run.norms = [float(x) for x in data.get("norms") or []] if data["steps"] else None
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no digest (no optimizer, or the run was killed): compared on printed output
    return run

"""``mpsready migrate PATH --verify -- python train.py ARGS``: prove a plan before anyone applies it.

The plan is applied to a temporary copy of the project, never to the project. Then, from the copy's root:

1. **the CPU, original against migrated**: the command runs in a copy of the original and in the migrated copy,
   both on this machine's CPU (``CUDA_VISIBLE_DEVICES=""``, so a CUDA machine takes the CPU branch too), both
   seeded the same way (``random``, NumPy and ``torch.manual_seed(0)`` before the program, which may seed again)
   and both stopped after ``max_steps`` optimizer steps (a global optimizer step hook,
   ``register_optimizer_step_post_hook``, torch/optim/optimizer.py, PyTorch >= 2.0). What they print and a sha256
   of every parameter their optimizers hold are compared;
2. **the emulated Mac**: the migrated copy runs under ``mpsready run`` once per ``--torch`` release, with the
   same step limit. Its outcome (completed, or the predicted Mac failure) and whether any tensor reached MPS
   are read from the run document (schema ``mpsready.run``).

A plan is **verified** only when every check holds for every release: the same CPU numbers, the emulated Mac
completes (or stops at the step limit), and tensors are on MPS. Everything the emulated Mac says is a
prediction, not an observation of a Mac.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from mpsready import childproc
from mpsready.errors import UsageError
from mpsready.migrate.engine import Plan

_SKIP = (".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".venv", "venv")

# Installed in both CPU runs through PYTHONPATH: the same seeds, a step limit and a digest of the parameters.
_SITE = '''\
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
        h, count = hashlib.sha256(), 0
        for o in _optimizers:
            for group in o.param_groups:
                for p in group["params"]:
                    t = p.detach().cpu().contiguous()
                    count += t.numel()
                    if numpy is not None and t.dtype != torch.bfloat16:
                        h.update(t.numpy().tobytes())
                    else:
                        h.update(repr(t.double().flatten().tolist()).encode())
        if _out:
            with open(_out, "w") as f:
                json.dump({"steps": _steps[0], "parameters": count, "sha256": h.hexdigest()}, f)

    atexit.register(_digest)
'''


@dataclass
class CpuRun:
    """One CPU run: exit code, what it printed, its optimizer steps and the parameters' sha256 (``None``: no
    optimizer stepped)."""

    exit_code: int | None
    stdout: str
    stderr_tail: str
    steps: int = 0
    parameters: int = 0
    sha256: str | None = None
    timed_out: bool = False


@dataclass
class MacRun:
    """One emulated-Mac run of the migrated copy: its release, outcome, first failure and whether MPS was used."""

    torch: str
    outcome: str
    mps_used: bool
    failure: str | None = None
    steps: int = 0


@dataclass
class VerifyResult:
    """The checks of ``--verify``; ``verified`` only when all hold."""

    command: list[str]
    original: CpuRun
    migrated: CpuRun
    mac: list[MacRun] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # not in the copies: links out of the project, pipes

    @property
    def same_cpu_numbers(self) -> bool:
        o, m = self.original, self.migrated
        if o.timed_out or m.timed_out or o.exit_code != 0 or m.exit_code != 0:
            return False  # an original that does not run to its end (or the step limit) here cannot be compared
        if o.sha256 is not None or m.sha256 is not None:
            return o.sha256 == m.sha256 and o.steps == m.steps
        return o.stdout == m.stdout

    @property
    def same_output(self) -> bool:
        return self.original.stdout == self.migrated.stdout

    def first_output_difference(self) -> str | None:
        """The first line where the two CPU runs printed something different, as ``-old`` / ``+new``."""
        for line in difflib.unified_diff(self.original.stdout.splitlines(), self.migrated.stdout.splitlines(),
                                         lineterm="", n=0):
            if line.startswith(("-", "+")) and not line.startswith(("---", "+++")):
                return line
        return None

    @property
    def verified(self) -> bool:
        return self.same_cpu_numbers and bool(self.mac) and all(
            r.outcome in ("completed", "stopped") and r.mps_used for r in self.mac)

    def to_dict(self) -> dict:
        def cpu(r: CpuRun) -> dict:
            return {"exit_code": r.exit_code, "optimizer_steps": r.steps, "parameters": r.parameters,
                    "parameters_sha256": r.sha256, "timed_out": r.timed_out}
        return {
            "command": self.command, "verified": self.verified, "same_cpu_numbers": self.same_cpu_numbers,
            "same_output": self.same_output, "first_output_difference": self.first_output_difference(),
            "cpu": {"original": cpu(self.original), "migrated": cpu(self.migrated)},
            "left_out_of_copies": list(self.left_out),
            "emulated_mac": [{"torch": r.torch, "outcome": r.outcome, "mps_used": r.mps_used, "failure": r.failure,
                              "optimizer_steps": r.steps, "basis": "predicted"} for r in self.mac],
        }


def _copy_tree(src: Path, dst: Path) -> list[str]:
    """``src`` into ``dst`` as a copy the program cannot write through: every regular file copied (never linked,
    so a hard link, a large checkpoint or a data file updated in place stays the project's own), a symbolic link
    recreated only when it points inside the project (rewritten to the same place in the copy, relative), and
    nothing else (a link out of the project, a named pipe, a socket, a device). Returns what was left out, one
    ``PATH (why)`` each. Raises :class:`~mpsready.errors.UsageError` when the copy cannot be made (a full
    ``TMPDIR``): a partial copy would verify a different project."""
    real = os.path.realpath(src)
    left_out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src):  # never follows a linked folder (followlinks=False)
        rel = Path(dirpath).relative_to(src)
        names = list(filenames)
        kept: list[str] = []
        for sub in dirnames:
            if sub in _SKIP or sub.startswith(".mpsready"):
                continue
            (names if os.path.islink(os.path.join(dirpath, sub)) else kept).append(sub)
        dirnames[:] = kept
        try:
            (dst / rel).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--verify: cannot copy the project into {dst}: {exc.strerror or exc}") from None
        for name in sorted(names):
            s, dest = os.path.join(dirpath, name), dst / rel / name
            shown = (rel / name).as_posix()
            try:
                mode = os.lstat(s).st_mode
                if stat.S_ISLNK(mode):
                    target = os.path.realpath(s)
                    if target != real and not target.startswith(real + os.sep):
                        left_out.append(f"{shown} (a link out of the project)")
                        continue
                    inside = dst / os.path.relpath(target, real)
                    os.symlink(os.path.relpath(inside, dest.parent), dest)
                elif stat.S_ISREG(mode):
                    _copy_file(s, dest)
                else:
                    left_out.append(f"{shown} (not a regular file)")
            except PermissionError:
                left_out.append(f"{shown} (not readable)")  # the program meets it as it would in the project
            except OSError as exc:
                raise UsageError(f"--verify: cannot copy {shown} into {dst}: {exc.strerror or exc}") from None
    return left_out


def _copy_file(src: str, dst: Path) -> None:
    """The bytes and mode of the regular file ``src`` in a new file ``dst`` (opened with ``O_NOFOLLOW``: a
    link swapped in since the walk is not followed; ``O_NONBLOCK``: a pipe swapped in does not block)."""
    fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PermissionError(13, "not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fin, open(dst, "xb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        os.chmod(dst, stat.S_IMODE(st.st_mode) | stat.S_IRUSR | stat.S_IWUSR)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        os.close(fd)


def check_cwd(root: Path, cwd: str) -> None:
    """``--cwd`` must name a folder inside the project: the runs happen in the copy, never in the project itself
    (an absolute path or ``../..`` would run them there). Raises :class:`~mpsready.errors.UsageError`."""
    real = os.path.realpath(root)
    where = os.path.realpath(os.path.join(real, cwd))
    if os.path.isabs(cwd) or (where != real and not where.startswith(real + os.sep)):
        raise UsageError(f"--cwd {cwd}: not a folder inside the project {root} (the runs happen in a copy of it)")
    if not os.path.isdir(where):
        raise UsageError(f"--cwd {cwd}: no such folder in the project {root}")


LEFTOVER_PREFIX = "mpsready-verify-"
OWNER = ".mpsready-verify-owner"


def clean_leftovers(tmpdir: str | None = None) -> list[str]:
    """Remove the copies a killed ``--verify`` left in ``TMPDIR``, only those it can prove are its own: a folder
    (not a link) named ``mpsready-verify-PID-*``, owned by this user, holding the owner file that run wrote
    with PID in it, where process PID is gone. Returns the folders removed."""
    tmpdir = tmpdir or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(tmpdir)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(LEFTOVER_PREFIX):
            continue
        pid_text = name[len(LEFTOVER_PREFIX):].split("-", 1)[0]
        path = os.path.join(tmpdir, name)
        try:
            st = os.lstat(path)
            if not (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and pid_text.isdigit()):
                continue
            with open(os.path.join(path, OWNER), "rb", opener=_no_follow) as fh:
                if fh.read(64) != f"{pid_text}\n".encode():
                    continue
        except OSError:
            continue
        pid = int(pid_text)
        if pid == os.getpid() or _alive(pid):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _python(argv: list[str]) -> list[str]:
    """``python``/``python3`` at the head of the command is this interpreter (the one with mpsready and torch)."""
    if argv and Path(argv[0]).name in ("python", "python3", Path(sys.executable).name):
        return [sys.executable, *argv[1:]]
    return list(argv)


MAX_OUTPUT = 16 * 1024 * 1024  # bytes of a run's stdout kept for the comparison


def _cpu_run(cwd: Path, argv: list[str], site: Path, max_steps: int, time_limit: float) -> CpuRun:
    """One CPU run in a process group of its own (:func:`mpsready.childproc.run_group`): the group is killed
    on the deadline (kept by this process and by the child's own watchdog in :data:`_SITE`), after the program
    exits (what it left running) and when this process dies (the copies are removed then too)."""
    base = site.parent
    digest = Path(tempfile.mkstemp(prefix="digest-", suffix=".json", dir=site)[1])
    digest.unlink()
    env = dict(os.environ)
    env.update({"CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0", "MPSREADY_VERIFY_MAX_STEPS": str(max_steps),
                "MPSREADY_VERIFY_DIGEST": str(digest), childproc.CLEANUP: json.dumps([str(base)]),
                "MPSREADY_VERIFY_DEADLINE": str(time.time() + time_limit + 5) if time_limit else "0",
                "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])})
    with tempfile.TemporaryFile(dir=base) as out, tempfile.TemporaryFile(dir=base) as err:
        rc, timed_out = childproc.run_group(_python(argv), env=env, cwd=str(cwd), stdin=subprocess.DEVNULL,
                                            stdout=out, stderr=err, timeout=time_limit or None)
        out.seek(0)
        stdout = out.read(MAX_OUTPUT).decode(errors="replace")
        err.seek(max(0, os.fstat(err.fileno()).st_size - 8000))
        stderr = err.read().decode(errors="replace")[-2000:]
    run = CpuRun(None if timed_out else rc, stdout, "" if timed_out else stderr, timed_out=timed_out)
    try:
        data = json.loads(digest.read_text())
        run.steps, run.parameters = int(data["steps"]), int(data["parameters"])
        run.sha256 = str(data["sha256"]) if data["steps"] else None
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no digest (no optimizer, or the run was killed): compared on printed output
    return run


def _mac_run(cwd: Path, argv: list[str], release: str, max_steps: int, time_limit: float, out: Path) -> MacRun:
    doc_path = out / f"run-{release}.json"
    cmd = [sys.executable, "-m", "mpsready", "run", "--torch", release, "--format", "json", "-o", str(doc_path), "-q"]
    if max_steps:
        cmd += ["--max-steps", str(max_steps)]
    if time_limit:
        cmd += ["--time-limit", str(time_limit)]
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""
    _rc, timed_out = childproc.run_group([*cmd, "--", *argv], env=env, cwd=str(cwd), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         timeout=(time_limit or 3600) + 120)
    if timed_out:
        return MacRun(release, "timed out", False)
    try:
        doc = json.loads(doc_path.read_text())
    except (OSError, ValueError):
        return MacRun(release, "no run document", False)
    if not isinstance(doc, dict):
        return MacRun(release, "no run document", False)
    first = doc.get("first_failure") or None
    failure = None
    if first:
        where = first.get("location") or {}
        place = f"{where.get('path')}:{where.get('line')}" if isinstance(where, dict) and where.get("path") else ""
        failure = " ".join(filter(None, [first.get("kind"), first.get("op"), place,
                                         str(first.get("message", "")).splitlines()[0][:200]]))
    return MacRun(str((doc.get("target") or {}).get("torch") or release), str(doc.get("outcome")),
                  bool(doc.get("mps_used")), failure, int(doc.get("steps") or 0))


def verify_plan(plan: Plan, command: list[str], *, releases: list[str], max_steps: int = 3,
                time_limit: float = 300.0, cwd: str = ".") -> VerifyResult:
    """Run the checks of the module docstring for ``plan`` with ``command`` (an argv run from the project's
    root, or from its folder ``cwd`` for a README that says ``cd pkg; python train.py``). ``releases``: PyTorch
    releases for the emulated Mac (``mpsready run --torch``); ``max_steps``:
    optimizer steps per run (0: no limit); ``time_limit``: seconds per run. Writes only under a temporary folder,
    removed at the end."""
    root = Path(plan.root)
    check_cwd(root, cwd)  # before any work: the runs never happen in the project itself
    for path in clean_leftovers():
        sys.stderr.write(f"mpsready migrate: removed {path} (the copies of a --verify that was killed)\n")
    previous = {}

    def on_signal(signum, _frame):
        raise childproc.Interrupted(signum)  # unwinds through the TemporaryDirectory: the copies are removed

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        with tempfile.TemporaryDirectory(prefix=f"{LEFTOVER_PREFIX}{os.getpid()}-") as tmp:
            base = Path(tmp)
            with open(base / OWNER, "x") as fh:  # proves the folder is a --verify's to the next run
                fh.write(f"{os.getpid()}\n")
            site = base / "site"
            site.mkdir()
            (site / "sitecustomize.py").write_text(_SITE)
            original, migrated = base / "original", base / "migrated"
            left_out = _copy_tree(root, original)
            _copy_tree(root, migrated)
            for fp in plan.files:
                target = migrated / fp.path
                target.unlink(missing_ok=True)  # a new file: nothing is written through a link
                target.write_text(fp.after, encoding="utf-8")
            result = VerifyResult(list(command), _cpu_run(original / cwd, command, site, max_steps, time_limit),
                                  _cpu_run(migrated / cwd, command, site, max_steps, time_limit),
                                  left_out=left_out)
            for release in releases:
                result.mac.append(_mac_run(migrated / cwd, command, release, max_steps, time_limit, base))
            return result
    except OSError as exc:  # the temporary folder itself (a full or read-only TMPDIR)
        raise UsageError(f"--verify: cannot make the temporary copies: {exc.strerror or exc}") from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def render_verify(result: VerifyResult) -> str:
    """The table ``--verify`` prints: per release, same CPU numbers, the emulated Mac's outcome, tensors on MPS."""
    same = "yes" if result.same_cpu_numbers else "no"
    o = result.original
    lines = [f"verify: {' '.join(result.command)} (CPU: original and migrated, {o.steps} optimizer step(s) each; "
             "emulated Mac: predicted, not observed on a Mac)",
             f"  {'torch':<8} {'same CPU numbers':<17} {'emulated Mac':<14} {'tensors on MPS':<15} first failure"]
    for r in result.mac:
        mps = "yes" if r.mps_used else "no"
        lines.append(f"  {r.torch:<8} {same:<17} {r.outcome:<14} {mps:<15} {r.failure or '-'}")
    if not result.same_cpu_numbers:
        m = result.migrated
        why = "a run timed out" if o.timed_out or m.timed_out else \
            f"the original does not run on this CPU (exit {o.exit_code}): nothing to compare" if o.exit_code != 0 else \
            f"the migrated copy exits {m.exit_code}" if m.exit_code != 0 else \
            "parameters differ after the same steps" if o.sha256 != m.sha256 else "printed output differs"
        for name, run in (("original", o), ("migrated", m)):
            if run.exit_code not in (0, None) and run.stderr_tail.strip():
                why += f"; the {name} ends with: {run.stderr_tail.strip().splitlines()[-1][:200]}"
        lines.append(f"  CPU: not the same ({why})")
    elif not result.same_output:
        lines.append(f"  CPU: same parameters, printed output differs (timings?): {result.first_output_difference()}")
    if result.left_out:
        lines.append(f"  not in the copies: {', '.join(result.left_out[:5])}"
                     + (f" and {len(result.left_out) - 5} more" if len(result.left_out) > 5 else ""))
    lines.append("verified: yes" if result.verified else "verified: no")
    return "\n".join(lines) + "\n"

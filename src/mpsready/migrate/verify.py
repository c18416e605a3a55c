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
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsready.migrate.engine import Plan

LINK_ABOVE = 16 * 1024 * 1024  # bytes: larger files that no edit touches are linked into the copies, not copied
_SKIP = (".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".venv", "venv")

# Installed in both CPU runs through PYTHONPATH: the same seeds, a step limit and a digest of the parameters.
_SITE = '''\
import atexit, hashlib, json, os, random
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
            "emulated_mac": [{"torch": r.torch, "outcome": r.outcome, "mps_used": r.mps_used, "failure": r.failure,
                              "optimizer_steps": r.steps, "basis": "predicted"} for r in self.mac],
        }


def _copy_tree(src: Path, dst: Path) -> None:
    """``src`` into ``dst``: small files copied, large ones linked (they are read, not edited)."""
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d not in _SKIP and not d.startswith(".mpsready")]
        rel = Path(dirpath).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for name in filenames:
            s, d = Path(dirpath) / name, dst / rel / name
            try:
                if s.is_symlink():
                    d.symlink_to(os.readlink(s))
                elif s.stat().st_size > LINK_ABOVE:
                    d.symlink_to(s.resolve())
                else:
                    shutil.copy2(s, d)
            except OSError:
                continue  # an unreadable file: the program meets it as it would in the project


def _python(argv: list[str]) -> list[str]:
    """``python``/``python3`` at the head of the command is this interpreter (the one with mpsready and torch)."""
    if argv and Path(argv[0]).name in ("python", "python3", Path(sys.executable).name):
        return [sys.executable, *argv[1:]]
    return list(argv)


def _cpu_run(cwd: Path, argv: list[str], site: Path, max_steps: int, time_limit: float) -> CpuRun:
    digest = Path(tempfile.mkstemp(prefix="digest-", suffix=".json", dir=site)[1])
    digest.unlink()
    env = dict(os.environ)
    env.update({"CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0", "MPSREADY_VERIFY_MAX_STEPS": str(max_steps),
                "MPSREADY_VERIFY_DIGEST": str(digest),
                "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])})
    try:
        proc = subprocess.run(_python(argv), cwd=cwd, env=env, capture_output=True, text=True, errors="replace",
                              timeout=time_limit or None)
        run = CpuRun(proc.returncode, proc.stdout, proc.stderr[-2000:])
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        run = CpuRun(None, out, "", timed_out=True)
    if digest.exists():
        data = json.loads(digest.read_text())
        run.steps, run.parameters = data["steps"], data["parameters"]
        run.sha256 = data["sha256"] if data["steps"] else None
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
    try:
        subprocess.run([*cmd, "--", *argv], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=(time_limit or 3600) + 120)
    except subprocess.TimeoutExpired:
        return MacRun(release, "timed out", False)
    if not doc_path.exists():
        return MacRun(release, "no run document", False)
    doc = json.loads(doc_path.read_text())
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
                time_limit: float = 300.0, cwd: str = ".",
                progress: Callable[[str], AbstractContextManager[Any]] | None = None) -> VerifyResult:
    """Run the checks of the module docstring for ``plan`` with ``command`` (an argv run from the project's
    root, or from its folder ``cwd`` for a README that says ``cd pkg; python train.py``). ``releases``: PyTorch
    releases for the emulated Mac (``mpsready run --torch``); ``max_steps``:
    optimizer steps per run (0: no limit); ``time_limit``: seconds per run. Writes only under a temporary folder,
    removed at the end. ``progress(description)``: a context manager around each run (the CLI's progress lines)."""
    root = Path(plan.root)
    step = progress or (lambda _description: nullcontext())
    with tempfile.TemporaryDirectory(prefix="mpsready-verify-") as tmp:
        base = Path(tmp)
        site = base / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(_SITE)
        original, migrated = base / "original", base / "migrated"
        _copy_tree(root, original)
        _copy_tree(root, migrated)
        for fp in plan.files:
            target = migrated / fp.path
            target.unlink(missing_ok=True)  # a linked file is replaced, never written through
            target.write_text(fp.after, encoding="utf-8")
        with step("the original on the CPU"):
            first = _cpu_run(original / cwd, command, site, max_steps, time_limit)
        with step("the migrated copy on the CPU"):
            second = _cpu_run(migrated / cwd, command, site, max_steps, time_limit)
        result = VerifyResult(list(command), first, second)
        for release in releases:
            with step(f"the migrated copy on the emulated Mac, torch {release}"):
                result.mac.append(_mac_run(migrated / cwd, command, release, max_steps, time_limit, base))
        return result


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
    lines.append("verified: yes" if result.verified else "verified: no")
    return "\n".join(lines) + "\n"

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

Every run is forked from one process that imported PyTorch and the emulator once, where it can be
(:mod:`mpsready.migrate.verify_runs`, issue 39).

A plan is **verified** only when every check holds for every release: the same CPU numbers, the emulated Mac
completes (or stops at the step limit), and tensors are on MPS. Everything the emulated Mac says is a
prediction, not an observation of a Mac. Every check that does not hold is one entry of
:meth:`VerifyResult.reasons` (printed under the table, ``reasons`` in JSON): the check, the release, why, and the
line (``path:line`` in the project) where one is known: the innermost frame of the project in a run's
traceback, the emulated Mac's failure, or, when no tensor reached MPS, the device selection between CUDA and
the CPU that the scan finds in the migrated copy (API104/API115).
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsready import childproc
from mpsready.errors import UsageError
from mpsready.migrate.copies import LEFTOVER_PREFIX, OWNER, SKIP as _SKIP, _copy_tree, check_cwd, clean_leftovers
from mpsready.migrate.engine import Plan
from mpsready.migrate.verify_notebook import (as_python, check_notebook, check_program, check_script, cpu_command,
                                              notebook_of, selection_line)
from mpsready.migrate.verify_runs import SITE, Runner, python_argv

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
    line: str | None = None  # the project's innermost frame of the traceback it ended with (path:line), if any
    norms: list[float] | None = None  # the L2 norm of each parameter, in the optimizers' order (the spread check)


@dataclass
class MacRun:
    """One emulated-Mac run of the migrated copy: its release, outcome, first failure and whether MPS was used."""

    torch: str
    outcome: str
    mps_used: bool
    failure: str | None = None
    steps: int = 0
    reason: str | None = None  # why the outcome is not completed/stopped, when it is not
    line: str | None = None  # path:line of the failure or of the error that ended the run
    no_mps_line: str | None = None  # where the migrated copy chooses between CUDA and the CPU only (no MPS)
    wrong: str | None = None  # a predicted silent wrong result of a completed run (its first advisory), not verified


@dataclass
class VerifyResult:
    """The checks of ``--verify``; ``verified`` only when all hold."""

    command: list[str]
    original: CpuRun
    migrated: CpuRun
    mac: list[MacRun] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # not in the copies: links out of the project, pipes
    original_again: CpuRun | None = None  # a second run of the original, made when the two CPU runs differ

    @property
    def original_varies(self) -> bool:
        """Whether the original, run twice the same way, gave different numbers (its own run-to-run spread)."""
        a, b = self.original, self.original_again
        if b is None or a.exit_code != 0 or b.exit_code != 0:
            return False
        return a.sha256 != b.sha256 if (a.sha256 or b.sha256) else a.stdout != b.stdout

    @property
    def within_spread(self) -> bool:
        """Whether the migrated run is within the original's own run-to-run spread (:func:`_within`). Judged from
        two runs of the original; without parameters, not judged."""
        return self.original_varies and _within(self.original, self.original_again, self.migrated)

    @property
    def cpu_agrees(self) -> bool:
        """The same CPU numbers, or, for an original that differs from itself run to run, within that spread."""
        return self.same_cpu_numbers or self.within_spread

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
        return self.cpu_agrees and bool(self.mac) and all(
            r.outcome in ("completed", "stopped") and r.mps_used and not r.wrong for r in self.mac)

    def cpu_reason(self) -> str | None:
        """Why the CPU numbers are not the same, or ``None`` when they are (or the migrated run is within the
        original's own run-to-run spread)."""
        if self.cpu_agrees:
            return None
        o, m = self.original, self.migrated
        why = "a run timed out" if o.timed_out or m.timed_out else \
            f"the original does not run on this CPU (exit {o.exit_code}): nothing to compare" if o.exit_code != 0 else \
            f"the migrated copy exits {m.exit_code}" if m.exit_code != 0 else \
            "parameters differ after the same steps" if o.sha256 != m.sha256 else "printed output differs"
        for name, run in (("original", o), ("migrated", m)):
            if run.exit_code not in (0, None) and run.stderr_tail.strip():
                why += f"; the {name} ends with: {run.stderr_tail.strip().splitlines()[-1][:200]}"
        return why

    def cpu_line(self) -> str | None:
        """The line behind a CPU "no": the project's innermost frame in the failing run's traceback, else the first
        printed line that differs (``output line N``)."""
        o, m = self.original, self.migrated
        for run in (o, m):
            if run.exit_code not in (0, None) and run.line:
                return run.line
        if o.stdout != m.stdout:
            for n, (a, b) in enumerate(itertools.zip_longest(o.stdout.splitlines(), m.stdout.splitlines()), 1):
                if a != b:
                    return f"output line {n}"
        return None

    def reasons(self) -> list[dict]:
        """Every "no" of the table: ``{"check", "torch", "reason", "line"}`` (``line`` ``None`` only where no line
        can be known: parameters that differ while the output is the same, a run without a document)."""
        out = []
        why = self.cpu_reason()
        if why is not None:
            out.append({"check": "same CPU numbers", "torch": None, "reason": why, "line": self.cpu_line()})
        if not self.mac:
            out.append({"check": "emulated Mac", "torch": None, "reason": "no release was run on the emulated Mac",
                        "line": None})
        for r in self.mac:
            if r.outcome not in ("completed", "stopped"):
                out.append({"check": "emulated Mac", "torch": r.torch,
                            "reason": r.reason or f"the emulated Mac run ended {r.outcome}", "line": r.line})
            elif r.wrong:
                out.append({"check": "emulated Mac", "torch": r.torch, "line": r.line,
                            "reason": r.wrong})
            if not r.mps_used:
                why = "no tensor reached the emulated MPS device: on a Mac the migrated program runs on the CPU"
                why += ("; the device is chosen between CUDA and the CPU only there" if r.no_mps_line else
                        "; no CUDA-or-CPU device selection found in the migrated files (does the program move a "
                        "tensor to a device at all?)")
                out.append({"check": "tensors on MPS", "torch": r.torch, "reason": why,
                            "line": r.no_mps_line or r.line})
        return out

    def to_dict(self) -> dict:
        def cpu(r: CpuRun) -> dict:
            return {"exit_code": r.exit_code, "optimizer_steps": r.steps, "parameters": r.parameters,
                    "parameters_sha256": r.sha256, "timed_out": r.timed_out}
        return {
            "command": self.command, "verified": self.verified, "same_cpu_numbers": self.same_cpu_numbers,
            "same_output": self.same_output, "first_output_difference": self.first_output_difference(),
            "cpu": {"original": cpu(self.original), "migrated": cpu(self.migrated)},
            "left_out_of_copies": list(self.left_out),
            "original_run_to_run": None if self.original_again is None else {
                "second_run": cpu(self.original_again), "varies": self.original_varies,
                "migrated_within_spread": self.within_spread},
            "emulated_mac": [{"torch": r.torch, "outcome": r.outcome, "mps_used": r.mps_used, "failure": r.failure,
                              "wrong_result": r.wrong, "optimizer_steps": r.steps, "basis": "predicted"}
                             for r in self.mac],
            "reasons": self.reasons(),
        }


def traceback_line(text: str, under: str) -> str | None:
    """The innermost ``File "PATH", line N`` of a Python traceback's text whose file is the project's (under
    ``under``, :class:`mpsready.frames.ProjectFiles`), as ``PATH:N`` relative to ``under``; ``None`` without one.
    Reads the traceback's fixed frame-line format, not Python source."""
    from mpsready.frames import ProjectFiles

    files = ProjectFiles([under])
    found = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith('File "'):
            continue
        path, sep, rest = line[len('File "'):].partition('", line ')
        number = rest.split(",")[0].strip()
        if not sep or not number.isdigit() or path.startswith("<"):
            continue
        path, cell, index = path.partition(".ipynb:cell ")  # a notebook's cell (verify_notebook, mpsready run)
        rel = files.relative(path + ".ipynb" if cell else path)
        if rel is not None:
            found = f"{rel}:cell {index}:line {number}" if cell and index.isdigit() else f"{rel}:{number}"
    return found


SPREAD_FACTOR = 3.0  # how many times the original's own run-to-run distance the migrated run may be from it


def _distance(x: list[float], y: list[float]) -> float:
    return sum((a - b) ** 2 for a, b in zip(x, y)) ** 0.5


def _within(a: CpuRun, b: CpuRun | None, m: CpuRun) -> bool:
    """Whether ``m``'s per-parameter norms are no farther (Euclidean) from the nearer of the original's two runs
    ``a`` and ``b`` than :data:`SPREAD_FACTOR` times the distance between ``a`` and ``b``. Two runs are a small
    sample of the original's spread: a third draw of the same process lands farther than the first two are from
    each other about half the time for one parameter, and rarely beyond three times that distance once the
    model has a few parameters (the distances concentrate)."""
    if b is None or m.exit_code != 0 or m.steps != a.steps or m.steps != b.steps:
        return False
    if not a.norms or not b.norms or not m.norms or not len(a.norms) == len(b.norms) == len(m.norms):
        return False
    spread = _distance(a.norms, b.norms)
    slack = 1e-9 * max(1.0, *(abs(v) for v in a.norms))  # summation order
    return min(_distance(m.norms, a.norms), _distance(m.norms, b.norms)) <= SPREAD_FACTOR * spread + slack


def run_to_run_spread(result: VerifyResult, again: Callable[[], CpuRun], say: Callable[[str], None]) -> None:
    """When the two CPU runs differ, run the original once more (``again``) to learn its own run-to-run spread
    (an initialisation that differs per process: a seed from the clock or ``os.urandom``)."""
    o, m = result.original, result.migrated
    if result.same_cpu_numbers or o.exit_code != 0 or m.exit_code != 0 or o.timed_out or m.timed_out:
        return
    say("verify: the CPU runs differ: running the original again to learn its own run-to-run spread")
    result.original_again = again()


def mac_result(cwd: Path, release: str, doc_path: Path, _rc: int, timed_out: bool, stderr: str,
               time_limit: float) -> MacRun:
    """One release's :class:`MacRun` from its run document at ``doc_path`` (or its exit and ``stderr``)."""
    if timed_out:
        return MacRun(release, "timed out", False,
                      reason=f"mpsready run did not end within {(time_limit or 3600) + 120:g} s")
    tail = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    no_doc = MacRun(release, "no run document", False,
                    reason=f"mpsready run exited {_rc} without a run document" + (f": {tail[-1][:200]}" if tail else ""),
                    line=traceback_line(stderr, str(cwd)))
    try:
        doc = json.loads(doc_path.read_text())
    except (OSError, ValueError):
        return no_doc
    if not isinstance(doc, dict):
        return no_doc
    first = doc.get("first_failure") or None
    failure = line = reason = None
    if first:
        where = first.get("location") or {}
        line = f"{where.get('path')}:{where.get('line')}" if isinstance(where, dict) and where.get("path") else None
        failure = " ".join(filter(None, [first.get("kind"), first.get("op"), line,
                                         str(first.get("message", "")).splitlines()[0][:200]]))
    outcome = str(doc.get("outcome"))
    pe = doc.get("program_error") if isinstance(doc.get("program_error"), dict) else None
    if outcome == "failed" and failure:
        reason = f"predicted Mac failure: {failure}"
    elif pe is not None:
        where = pe.get("location") or {}
        line = line or (f"{where.get('path')}:{where.get('line')}" if isinstance(where, dict) and where.get("path")
                        else None)
        reason = (f"the run stopped on {pe.get('exception')}: {str(pe.get('message') or '').splitlines()[0][:200]} "
                  "(not a Mac failure: the program's own error or its environment)"
                  if pe.get("message") else f"the run stopped on {pe.get('exception')}")
    elif outcome not in ("completed", "stopped"):
        reason = f"the emulated Mac run ended {outcome}" + (f" ({doc.get('stop_reason')})"
                                                           if doc.get("stop_reason") else "")
    wrong = None
    advisories = [w for w in doc.get("wrong_results") or [] if isinstance(w, dict)]
    if advisories and not failure and outcome in ("completed", "stopped"):
        # it runs, but an advisory says MPS computes a call of it wrong there: mpsready run exits 1, not verified
        w = advisories[0]
        where = w.get("location") or {}
        line = f"{where.get('path')}:{where.get('line')}" if isinstance(where, dict) and where.get("path") else None
        call = f"{w.get('op')}" + (f" ({w['dtype']})" if w.get("dtype") else "")
        note = "; ".join([f"advisory {w.get('id')}"] + ([f"fixed in {w['fixed_in']}"] if w.get("fixed_in") else [])
                         + ([f"+{len(advisories) - 1} more"] if len(advisories) > 1 else []))
        failure = " ".join(filter(None, ["wrong result", call, line, f"({note})"]))
        wrong = f"predicted wrong result: MPS computes {call} silently wrong on this release ({note})"
    return MacRun(str((doc.get("target") or {}).get("torch") or release), outcome,
                  bool(doc.get("mps_used")), failure, int(doc.get("steps") or 0), reason=reason, line=line,
                  wrong=wrong)


def device_selection_line(root: Path, files: list[Path]) -> str | None:
    """The first device choice between CUDA and the CPU only (scan rules API104/API115) in ``files`` of the
    migrated copy ``root``, as ``path:line``: why no tensor reaches MPS."""
    from mpsready.scan.code.analyzer import analyze_source

    for f in files:
        try:
            res = analyze_source((root / f).read_bytes())
        except OSError:
            continue
        hits = sorted(int(x.get("line") or 0) for x in res.findings if x.get("code") in ("API104", "API115"))
        if hits:
            return f"{Path(f).as_posix()}:{hits[0]}"
    return None


def verify_plan(plan: Plan, command: list[str], *, releases: list[str], max_steps: int = 3,
                time_limit: float = 300.0, cwd: str = ".", say: Callable[[str], None] | None = None,
                progress: Callable[[str], AbstractContextManager[Any]] | None = None,
                release_line: Callable[[str], None] | None = None) -> VerifyResult:
    """Run the checks of the module docstring for ``plan`` with ``command`` (an argv run from the project's
    root, or from its folder ``cwd`` for a README that says ``cd pkg; python train.py``). ``releases``: PyTorch
    releases for the emulated Mac (``mpsready run --torch``); ``max_steps``:
    optimizer steps per run (0: no limit); ``time_limit``: seconds per run. Writes only under a temporary folder,
    removed at the end. ``progress(description)``: a context manager around each run (the CLI's progress lines);
    ``release_line``: where each release's ``started``/``ended`` line of several releases goes (else ``say``)."""
    root = Path(plan.root)
    check_cwd(root, cwd)  # before any work: the runs never happen in the project itself
    command = as_python(command)  # script.py ARGS: python script.py ARGS, as mpsready run runs it
    check_program(root / cwd, command)  # a program that cannot start: a usage error before anything runs
    check_notebook(root / cwd, command)  # a notebook with !pip or x?: a usage error before anything runs
    check_script(root / cwd, command)  # python missing.py: a usage error before anything runs
    cpu = cpu_command(command)  # a notebook's cells run in a plain child, as mpsready run runs them
    for path in clean_leftovers():
        sys.stderr.write(f"mpsready migrate: removed {path} (the copies of a --verify that was killed)\n")
    previous = {}

    def on_signal(signum, _frame):
        raise childproc.Interrupted(signum)  # unwinds through the TemporaryDirectory: the copies are removed

    if threading.current_thread() is threading.main_thread():
        previous = childproc.catch((signal.SIGTERM, signal.SIGHUP), on_signal)
    try:
        with tempfile.TemporaryDirectory(prefix=f"{LEFTOVER_PREFIX}{os.getpid()}-") as tmp:
            base = Path(tmp)
            with open(base / OWNER, "x") as fh:  # proves the folder is a --verify's to the next run
                fh.write(f"{os.getpid()}\n")
            runner = Runner(base, releases)  # the zygote loads PyTorch and the emulator while the copies are made
            try:
                return _verify_in(plan, command, cpu, releases, base, runner, root, cwd, max_steps, time_limit,
                                  say, progress, release_line)
            finally:
                runner.close()
    except OSError as exc:  # the temporary folder itself (a full or read-only TMPDIR)
        raise UsageError(f"--verify: cannot make the temporary copies: {exc.strerror or exc}") from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _verify_in(plan: Plan, command: list[str], cpu: list[str], releases: list[str], base: Path, runner: Any,
               root: Path, cwd: str, max_steps: int, time_limit: float, say: Callable[[str], None] | None,
               progress: Callable[[str], AbstractContextManager[Any]] | None,
               release_line: Callable[[str], None] | None) -> VerifyResult:
    """:func:`verify_plan` inside its temporary folder ``base``, its runs made by ``runner``
    (:class:`mpsready.migrate.verify_runs.Runner`)."""
    site = base / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE)
    original, migrated = base / "original", base / "migrated"
    left_out = _copy_tree(root, original)
    _copy_tree(root, migrated)
    for fp in plan.files:
        target = migrated / fp.path
        target.unlink(missing_ok=True)  # a new file: nothing is written through a link
        target.write_text(fp.after, encoding="utf-8")
    tell = say or (lambda _line: None)
    step = progress or (lambda _description: nullcontext())
    if runner.zygote is not None:
        with step("loading PyTorch and the emulated Mac once, for every run"):
            runner.ready()
    tell(f"verify: CPU run 1/2: the original ({' '.join(command)})")
    with step("the original on the CPU"):
        first = runner.cpu(original / cwd, cpu, site, max_steps, time_limit)
    tell("verify: CPU run 2/2: the migrated copy")
    with step("the migrated copy on the CPU"):
        second = runner.cpu(migrated / cwd, cpu, site, max_steps, time_limit)
    result = VerifyResult(list(command), first, second, left_out=left_out)

    def again() -> CpuRun:
        with step("the original on the CPU again (its own run-to-run spread)"):
            return runner.cpu(original / cwd, cpu, site, max_steps, time_limit)

    run_to_run_spread(result, again, tell)
    if releases:  # one release matrix: each release's child forked from the zygote, several at a time
        with step(f"the migrated copy on the emulated Mac, torch {', '.join(releases)}"):
            result.mac += runner.mac(migrated / cwd, command, max_steps, time_limit, base, release_line or tell)
    if any(not r.mps_used for r in result.mac):
        nb = notebook_of(command)
        where = selection_line(migrated, Path(cwd) / nb[0]) if nb else \
            device_selection_line(migrated, _program_files(migrated, cwd, command, plan))
        for r in result.mac:
            r.no_mps_line = None if r.mps_used else where
    return result


def _program_files(root: Path, cwd: str, command: list[str], plan: Plan) -> list[Path]:
    """The command's script (``python train.py``: ``train.py``, relative to ``root``) first, then the plan's files,
    then every other Python file of the copy (sorted): where a device choice is looked for."""
    out: list[Path] = []
    words = python_argv(command)[1:] if command and python_argv(command)[0] == sys.executable else []
    script = next((w for w in words if w.endswith(".py")), None)
    if script:
        p = (root / cwd / script).resolve()
        if p.is_file() and p.is_relative_to(root.resolve()):
            out.append(p.relative_to(root.resolve()))
    out += [Path(fp.path) for fp in plan.files]
    for p in sorted(root.rglob("*.py")):
        if not any(part in _SKIP for part in p.relative_to(root).parts):
            out.append(p.relative_to(root))
    return list(dict.fromkeys(out))


def render_verify(result: VerifyResult) -> str:
    """The table ``--verify`` prints: per release, same CPU numbers, the emulated Mac's outcome, tensors on MPS."""
    same = "yes" if result.same_cpu_numbers else "within spread" if result.within_spread else "no"
    o, m = result.original, result.migrated
    # the original may stop before its first step (a hard-coded 'cuda' on this CPU) while the migrated copy steps
    steps = f"{o.steps} optimizer step(s) each" if o.steps == m.steps else \
        f"the original {o.steps}, the migrated {m.steps} optimizer step(s)"
    lines = [f"verify: {' '.join(result.command)} (CPU: original and migrated, {steps}; "
             "emulated Mac: predicted, not observed on a Mac)",
             f"  {'torch':<8} {'same CPU numbers':<17} {'emulated Mac':<14} {'tensors on MPS':<15} first failure"]
    for r in result.mac:
        mps = "yes" if r.mps_used else "no"
        lines.append(f"  {r.torch:<8} {same:<17} {r.outcome:<14} {mps:<15} {r.failure or '-'}")
    if result.within_spread:
        lines.append("  CPU: within the original's own run-to-run spread (the original, run twice the same way, gave "
                     "different numbers; the parameters' norms after the migrated run are no farther from the nearer "
                     f"original run than {SPREAD_FACTOR:g} times the distance between the two original runs)")
    elif not result.same_cpu_numbers:
        cpu_why = result.cpu_reason() or "not the same numbers"
        if result.original_varies:
            cpu_why += "; the original itself differs run to run, and the migrated run is outside that spread"
        lines.append(f"  CPU: not the same ({cpu_why})")
    elif not result.same_output:
        lines.append(f"  CPU: same parameters, printed output differs (timings?): {result.first_output_difference()}")
    reasons = result.reasons()
    if reasons:
        lines.append("  why not verified (each \"no\" above):")
        for why in reasons:
            rel = f" torch {why['torch']}," if why["torch"] else ""
            lines.append(f"  -{rel} {why['check']}: no: {why['reason']}"
                         + (f" (at {why['line']})" if why["line"] else " (no line known)"))
    if result.left_out:
        lines.append(f"  not in the copies: {', '.join(result.left_out[:5])}"
                     + (f" and {len(result.left_out) - 5} more" if len(result.left_out) > 5 else ""))
    lines.append("verified: yes" if result.verified else "verified: no")
    return "\n".join(lines) + "\n"

"""``mpsready run [options] -- python script.py ARGS``: argument parsing and the child process only.

``--torch 2.3,2.13`` or ``--torch all`` runs one child per release (:mod:`mpsready.run.matrix`); a single
``--torch 2.5`` runs one child as before."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading

from mpsready import childproc
from mpsready.errors import ExitCode, UsageError
from mpsready.run import matrix
from mpsready.commands.run import DEFAULT_TIME_LIMIT, FORMATS, register  # noqa: F401  (the arguments: cheap to import)
from mpsready import versions
from mpsready.defaults import MAX_TIME_LIMIT_S

# --mac -> the machine of the emulated Mac (mpsready.ops.judge.MACHINES)
MACHINE_OF = {"apple": "arm64", "intel": "x86_64"}
# seconds past the time limit before the child's process group is killed (a program that blocks SIGALRM)
KILL_GRACE = 60.0


def target_torch(requested: str | None) -> str:
    from mpsready.ops import api as ops_api

    if requested is None:
        from mpsready.trace.api import installed_torch_version

        requested = installed_torch_version()
    try:
        ops_api.load_db(requested)
        versions.release(requested)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return requested


def target_machine(requested: str | None, machine: str) -> str:
    """:func:`target_torch`, checked against the machine (``--mac intel``: torch 2.2 only, one release)."""
    if machine != "arm64" and matrix.is_matrix(requested):
        raise UsageError("--mac intel goes with one release, --torch 2.2: the last macOS x86_64 wheel is torch 2.2.2")
    torch_v = target_torch(requested)
    if machine != "arm64":
        from mpsready.ops import api as ops_api
        from mpsready.ops.judge_dtypes import check_machine

        try:
            check_machine(machine, ops_api.load_db(torch_v).torch_version)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return torch_v


def run(args: argparse.Namespace) -> int:
    import importlib.util

    from mpsready.run.child import CHILD_SETUP_ERROR, STARTED
    from mpsready.run.command import parse_program
    from mpsready.run.render import render_terminal

    prog = parse_program(args.program)
    if importlib.util.find_spec("torch") is None:
        raise UsageError("mpsready run needs PyTorch in this environment: pip install 'mpsready[torch]'")
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    if args.time_limit is not None and not 0 <= args.time_limit <= MAX_TIME_LIMIT_S:  # nan and inf too
        raise UsageError(f"--time-limit must be 0 (no limit) or a positive number of seconds, at most "
                         f"{MAX_TIME_LIMIT_S:,} (a year)")
    args.time_limit_default = args.time_limit is None
    if args.time_limit is None:
        args.time_limit = DEFAULT_TIME_LIMIT
    elif args.time_limit == 0:
        args.time_limit = None
    if args.output:
        check_output(args.output)
    fallback = args.fallback if args.fallback is not None else os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") == "1"
    args.machine = MACHINE_OF.get(getattr(args, "mac", None) or "apple", "arm64")
    try:
        versions.check_macos(args.macos, args.machine)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if matrix.is_matrix(args.torch) and args.machine == "arm64":
        return _run_matrix(args, prog, fallback)
    torch_v = target_machine(args.torch, args.machine)
    if args.show_output:
        raise UsageError("--show-output goes with several --torch releases (e.g. --torch 2.3,2.13)")
    with tempfile.TemporaryDirectory(prefix="mpsready-run-") as tmp:
        out = os.path.join(tmp, "result.json")
        spec = _spec(args, prog, torch_v, fallback, out)
        spec_path = os.path.join(tmp, "spec.json")
        # the program's stdout is its own; with --format json on stdout, keep it apart from the document
        stdout = sys.stderr if (args.format == "json" and not args.output) else None
        wait = None if args.time_limit is None else args.time_limit + KILL_GRACE
        line = _status_line(spec, out, getattr(args, "quiet", False))
        with open(spec_path, "w", encoding="utf-8") as fh:
            json.dump(spec, fh)
        try:
            rc, timed_out = childproc.run_group(
                childproc.command(sys.executable, "mpsready.run.child", [spec_path]),
                env=childproc.child_env(dict(os.environ), cleanup=[tmp]), stdout=stdout, timeout=wait,
                foreground=True)
        except childproc.Interrupted as exc:
            print(f"mpsready run: {exc}; the program and every process it started were ended", file=sys.stderr)
            return 128 + exc.signum
        finally:
            if line is not None:
                line.stop()
        started = os.path.exists(out + STARTED)
        if not os.path.exists(out):
            if rc == CHILD_SETUP_ERROR and not started:
                return ExitCode.USAGE
            if timed_out:
                how = (f"the program was killed {KILL_GRACE:g} s after the time limit of {args.time_limit:g} s (it "
                       "did not stop) before its result was written")
            elif rc < 0:
                how = f"the program was killed by {_signal_name(rc)} before its result was written"
            elif started:
                how = (f"the program ended its process with status {rc} outside Python's exit (C exit(), or a "
                       "library ending the process) before its result was written")
            else:
                how = f"the child process ended with status {rc} before the program started"
            print(f"mpsready run: {how}; nothing is predicted past that point", file=sys.stderr)
            return 3
        with open(out, encoding="utf-8") as fh:
            doc = json.load(fh)
    if doc.get("program_exit"):
        print(f"mpsready run: {doc['program_exit']['note']}", file=sys.stderr)
    text = json.dumps(doc, indent=1) + "\n" if args.format == "json" else render_terminal(doc)
    _emit(args, text, "run result", lambda: render_terminal(doc))
    return int(doc["exit_code"])


def _status_line(spec: dict, out: str, quiet: bool):
    """A started :class:`~mpsready.run.status.StatusLine` on stderr, and ``spec["status"]`` set so that the child
    writes its counts, unless ``-q`` (then ``None``, the spec unchanged): on a terminal a line when the counts
    changed, elsewhere (a pipe, a CI log) a heartbeat line every 30 s."""
    from mpsready.progress import enabled, heartbeat_wanted

    beat = heartbeat_wanted(sys.stderr, quiet)  # not a terminal: a plain line every 30 s, changed or not
    if not enabled(sys.stderr, quiet) and not beat:
        return None
    from mpsready.run.status import HEARTBEAT_S, PRINT_EVERY_S, SUFFIX, StatusLine

    spec["status"] = out + SUFFIX
    line = StatusLine(spec["status"], sys.stderr, HEARTBEAT_S if beat else PRINT_EVERY_S, heartbeat=beat)
    line.start()
    return line


def _spec(args: argparse.Namespace, prog, torch_v: str, fallback: bool, out: str) -> dict:
    """The child's spec (:mod:`mpsready.run.child`)."""
    return {"program": {**prog.to_dict(), "root": prog.root},
            "target": {"torch": torch_v, "macos": args.macos, "fallback": fallback,
                       "machine": getattr(args, "machine", "arm64")},
            "keep_going": args.keep_going, "max_steps": args.max_steps, "time_limit": args.time_limit,
            "time_limit_default": bool(getattr(args, "time_limit_default", False)), "out": out,
            "nan_check": getattr(args, "nan_check", True)}


def _child_env(fallback: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTORCH_ENABLE_MPS_FALLBACK"] = "1" if fallback else "0"
    return env  # mpsready's own folder is given by childproc.command, never through PYTHONPATH


def _signal_name(returncode: int) -> str:
    import signal

    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def check_output(path: str) -> None:
    """Before the program runs: ``-o PATH`` must be writable as a file. Raises
    :class:`~mpsready.errors.UsageError` when ``path`` is a folder, its folder is missing or not a folder, or
    the folder is not writable."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"-o {path}: is a folder; give a file name")
    if not os.path.isdir(folder):
        raise UsageError(f"-o {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"-o {path}: folder {folder} is not writable")


def _emit(args: argparse.Namespace, text: str, label: str, summary) -> None:
    """``text`` to ``-o`` (atomically, then ``label: PATH`` and, for JSON, the terminal ``summary()`` on stderr) or
    to stdout. Raises :class:`UsageError` when the file cannot be written."""
    from mpsready.output import emit

    emit(text, args.output, atomic=True)
    if args.output:
        print(f"{label}: {args.output}", file=sys.stderr)
        if args.format == "json":
            sys.stderr.write(summary())


def _run_matrix(args: argparse.Namespace, prog, fallback: bool) -> int:
    """``--torch 2.3,2.13`` / ``--torch all``: one child per release (:mod:`mpsready.run.matrix`)."""
    from mpsready.run.render import render_matrix_outputs, render_matrix_terminal

    releases = matrix.parse_releases(args.torch)
    quiet = getattr(args, "quiet", False)
    jobs = matrix.default_jobs(len(releases))
    if not quiet:
        print(f"mpsready run: {len(releases)} release(s) ({', '.join(r for _q, r in releases)}), "
              f"{jobs} at a time", file=sys.stderr)

    from mpsready.progress import heartbeat_wanted
    from mpsready.run.status import SUFFIX, MatrixStatus

    status = None if quiet else MatrixStatus(sys.stderr, heartbeat=heartbeat_wanted(sys.stderr, quiet))

    def make_spec(req: str, out: str) -> dict:
        spec = _spec(args, prog, req, fallback, out)
        if status is not None:  # per release: started, step N, ended
            spec["status"] = out + SUFFIX
            status.started(req, spec["status"])
        return spec

    def progress(rr: matrix.ReleaseRun) -> None:
        if status is not None:
            status.ended(rr.requested)
            print(f"  torch {rr.requested}: ended, {rr.outcome} ({rr.seconds:.1f} s)", file=sys.stderr)

    if status is not None:
        status.start()
    previous = {}

    def on_signal(signum, _frame):  # as a single run: the children ended (run_releases), 128 + the signal, said
        raise childproc.Interrupted(signum)

    if threading.current_thread() is threading.main_thread():
        previous = childproc.catch((signal.SIGTERM, signal.SIGHUP, signal.SIGINT), on_signal)
    try:
        runs = matrix.run_releases(releases, make_spec, _child_env(fallback), jobs=jobs, progress=progress,
                                   macos=args.macos, fallback=fallback)
    except childproc.Interrupted as exc:
        print(f"mpsready run: {exc}; the releases and every process they started were ended", file=sys.stderr)
        return 128 + exc.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if status is not None:
            status.stop()
    doc = matrix.build_matrix_document(
        runs, args.torch, {"macos": args.macos, "fallback": fallback}, {**prog.to_dict(), "root": prog.root},
        {"keep_going": bool(args.keep_going), "max_steps": args.max_steps, "time_limit": args.time_limit,
         "jobs": jobs}, show_output=args.show_output)
    sys.stderr.write(render_matrix_outputs(doc))
    if args.format == "json":
        text = json.dumps(doc, indent=1) + "\n"
    else:
        tty = args.output is None and sys.stdout.isatty()
        width = shutil.get_terminal_size((120, 24)).columns if tty else 160
        text = render_matrix_terminal(doc, color=tty, width=width)
    _emit(args, text, "run matrix", lambda: render_matrix_terminal(doc, width=160))
    return int(doc["exit_code"])

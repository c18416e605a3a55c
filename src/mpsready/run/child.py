"""The child process of ``mpsready run``: install the emulated Mac, run the user's program, write the result.

``main([SPEC.json])``, started by :func:`mpsready.childproc.command` (the import path of a Mac's ``python`` for
the program, set only once the emulator is loaded), where SPEC holds ``program``
(:class:`~mpsready.run.command.Program` fields), ``target`` (torch, macos, fallback), ``keep_going``,
``max_steps``, ``time_limit``, ``out`` (where the result document goes) and ``nan_check`` (default true:
:class:`mpsready.numerics.hooks.RunWatch`). The program runs in this process as
``__main__`` (``runpy``), with its own ``sys.argv``; its output goes where this process's goes. Its uncaught
exception is printed as Python would print it, then classified by the mark the emulator put on it
(:func:`mpsready.emulate.mac_error_kind`), never by its text: a failure the emulator raised (op, dtype, MPS's
message, the user's line) or marked (PyTorch's "Torch not compiled with CUDA enabled", an NCCL process group): a
Mac fails there too; or an exception the emulated Mac did not raise (a module or file the environment lacks, the
program's own bug): outcome ``inconclusive``, which proves nothing about the Mac beyond the point reached; or a
clean stop.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import runpy
import signal
import sys
import tempfile
import time
import traceback
from typing import Any, Callable

from mpsready.run.document import build_document
from mpsready.run.spawned import read_reports

# Exit status of this child, read by the parent before the result document is.
CHILD_OK = 0
CHILD_SETUP_ERROR = 2
# next to the result document: written just before the program starts (a status after it is the program's)
STARTED = ".started"


def _user_location(exc: BaseException, root: str) -> dict[str, Any] | None:
    """The innermost traceback frame in the program's own files (:func:`mpsready.frames.user_location`)."""
    from mpsready.frames import user_location

    return user_location(exc, root)


# Exceptions that mean the program's environment lacks something it needs (a module, a file): a property of
# the machine running mpsready, not of the Mac.
_ENVIRONMENT = (ImportError, FileNotFoundError)


def _program_error(exc: BaseException, root: str) -> dict[str, Any]:
    """The entry for an exception the emulated Mac did not raise (``mac`` False): ``kind`` ``environment``
    (ImportError, ModuleNotFoundError, FileNotFoundError; ``missing`` names the module or file) or
    ``program_error`` (anything else)."""
    missing = None
    if isinstance(exc, ImportError):
        missing = f"module {exc.name}" if exc.name else None
    elif isinstance(exc, FileNotFoundError):
        missing = f"file {exc.filename}" if exc.filename else None
    return {"kind": "environment" if isinstance(exc, _ENVIRONMENT) else "program_error",
            "exception": type(exc).__name__, "message": str(exc)[:2000], "location": _user_location(exc, root),
            "op": None, "dtype": None, "mac": False, "missing": missing}


def _print_exception(exc: BaseException, root: str | None = None) -> None:
    """The traceback as a Mac would print it, with the user's frames only: a file under ``root`` outside
    ``site-packages`` and mpsready (the emulator stands in for PyTorch's C++ here, so its frames and the
    dispatch plumbing that calls it, ``torch/_dynamo/eval_frame.py``, ``torch/utils/_python_dispatch.py``,
    would not be there on a Mac; PyTorch's own Python frames are left out with them and counted). Without
    ``root``, or when no frame is the user's, only this runner, runpy and the emulator are left out."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frames = [fs for fs in traceback.extract_tb(exc.__traceback__)
              if not fs.filename.startswith(pkg) and not fs.filename.startswith("<frozen runpy")]
    user = [fs for fs in frames if root and _is_user_file(fs.filename, root, pkg)]
    left_out = len(frames) - len(user) if user else 0
    out = ["Traceback (most recent call last):\n", *traceback.format_list(user or frames)]
    if left_out:
        out.append(f"  ({left_out} frame{'s' if left_out != 1 else ''} inside PyTorch and other libraries not shown)\n")
    out += traceback.format_exception_only(type(exc), exc)
    _say("".join(out))


def _say(text: str) -> None:
    """``text`` on stderr, if the program left one: a program that closed fd 2 (or set ``sys.stderr`` to
    ``None``) must not cost the run its result (issue 34: the Mac failure used to be lost, exit 3)."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _is_user_file(filename: str, root: str, pkg: str) -> bool:
    path = os.path.abspath(filename)
    return (path.startswith(os.path.abspath(root) + os.sep) and not path.startswith(pkg)
            and "site-packages" not in path and "dist-packages" not in path)


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the program of ``spec`` under the emulator; returns the raw result (``run.document`` shapes it).

    Long because the emulator's install, the program's run and every undo (spawn patch, fallback watch,
    status writer, the emulator itself) sit in one try/finally, in the order the program needs them."""
    from mpsready.emulate import Emulator, MacCrash, StopRun, Target, mac_error_kind
    from mpsready.emulate.session import mac_fact_origin
    from mpsready.emulate import cpu_refusal

    prog = spec["program"]
    root = prog["root"]
    tgt = spec["target"]
    emu = Emulator(Target(tgt["torch"], tgt["macos"], bool(tgt["fallback"]), tgt.get("machine", "arm64")), root,
                   keep_going=bool(spec.get("keep_going")), max_steps=spec.get("max_steps"),
                   time_limit=spec.get("time_limit"))
    status = _start_status(spec, emu)  # before the emulator is installed: the thread is mpsready's
    # macOS starts DataLoader workers and other child processes by "spawn" (Python 3.8+ default there)
    try:
        multiprocessing.set_start_method("spawn", force=True)
    except RuntimeError:
        pass
    sys.argv = list(prog["argv"])
    tests = prog["kind"] == "module" and prog["target"] == "pytest"
    if tests:  # the program is the test suite: each test gets its verdict (the plugin, attached to this emulator)
        from mpsready.run.attached import attach

        attach(emu, tgt["torch"])
        sys.argv[1:1] = ["-p", "mpsready.pytest_plugin"]
    from mpsready.childproc import enter_user_path

    # the path a Mac's python gives the program: its script's folder (python script.py) or the current folder
    # (python -m), then PYTHONPATH; the emulator and this runner are loaded before any of it
    import mpsready.emulate  # noqa: F401
    # python resolves a symbolic link to the script before taking its folder (docs: "sys.path[0]")
    enter_user_path(os.path.dirname(os.path.realpath(prog["target"])) if prog["kind"] in ("script", "notebook")
                    else os.getcwd())
    outcome, exit_code, error, program_error = "completed", 0, None, None
    if tgt["fallback"]:
        os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"
    # otherwise the environment stays as the user's shell has it, so that a program's own
    # os.environ.setdefault("PYTORCH_ENABLE_MPS_FALLBACK", "1") before importing torch takes effect, as on a Mac
    from mpsready.run import spawned

    report_path = os.path.join(os.path.dirname(os.path.abspath(spec["out"])) if spec.get("out") else
                               tempfile.gettempdir(), f"mpsready-spawn-{os.getpid()}-{id(spec)}.jsonl")
    unspawn = spawned.patch_command_line(root, dict(tgt), report_path)
    emu.install()
    spawned.watch_forks(emu)  # a process the program forks keeps this emulator and writes its account
    main_pid = os.getpid()
    children: dict[str, Any] = {}
    from mpsready.numerics.hooks import RunWatch

    numerics = RunWatch(emu, nan_check=bool(spec.get("nan_check", True)))  # first NaN/Inf, shapes per line
    numerics.install()
    unwatch = watch_fallback_variable(emu)  # after install, which imports torch modules itself
    from mpsready.run.warning_place import install_for_run

    unplace = install_for_run()  # PyTorch's C++ warnings at the program's line, not the emulator's
    t0 = time.perf_counter()
    if emu.time_limit:  # the limit counts the program's time, not the emulator's start-up (slow on a busy machine)
        emu.deadline = t0 + emu.time_limit
    real_exit = os._exit
    os._exit = _on_os_exit(spec, emu, t0, real_exit)
    if spec.get("out"):
        open(spec["out"] + STARTED, "w").close()  # the parent tells the program's exit from the child's own
    try:
        if emu.time_limit:  # armed here, inside the try: installing the emulator may take longer than a short limit
            signal.signal(signal.SIGALRM, _alarm(emu))
            signal.setitimer(signal.ITIMER_REAL, max(0.01, emu.time_limit + 0.5 - (time.perf_counter() - t0)))
        if prog["kind"] == "script":
            runpy.run_path(prog["target"], run_name="__main__")
        elif prog["kind"] == "notebook":  # the code cells in order, each compiled as PATH:cell N
            from mpsready.run.notebook import run_cells

            run_cells(prog["target"], prog["argv"])
        else:
            runpy.run_module(prog["target"], run_name="__main__", alter_sys=True)
    except StopRun as exc:
        outcome = "stopped"
        emu.stop_reason = emu.stop_reason or str(exc)
    except SystemExit as exc:
        code = exc.code
        exit_code = code if isinstance(code, int) else (0 if code is None else 1)
        if exit_code != 0:  # the program's own decision (argparse, a check of its own): no Mac prediction
            outcome = "inconclusive"
            program_error = {"kind": "exit", "exception": "SystemExit", "op": None, "dtype": None, "mac": False,
                             "message": f"the program exited with status {code}", "missing": None,
                             "location": _user_location(exc, root)}
    except MacCrash as exc:
        outcome = "failed"
        _say(f"mpsready run: the process would abort here on a Mac: {exc}\n")
    except BaseException as exc:  # one the emulator raised (or marked) as a Mac would, or the program's own
        _print_exception(exc, root)
        if emu.failure_of(exc) is not None:
            outcome = "failed"  # already in emu.failures, with op, dtype and the user's line
        else:
            kind = mac_error_kind(exc) or mac_fact_origin(exc)
            child = _child_failure(report_path)
            if kind is None and child is not None:  # a spawned child (a DataLoader worker) failed as on a Mac
                outcome = "failed"
                error = {**child, "location": _user_location(exc, root), "op": None, "dtype": None, "mac": True}
            elif kind is not None:
                outcome = "failed"
                error = {"kind": kind, "exception": type(exc).__name__, "message": str(exc)[:2000],
                         "location": _user_location(exc, root), "op": None, "dtype": None, "mac": True}
            elif (refused := cpu_refusal.refusal_of(exc)) is not None:  # the CPU kernel's own check
                outcome = "unverified"
                emu.unverified_regions.append(cpu_refusal.entry(exc, refused[0], refused[1], emu.judge.torch))
            else:
                outcome = "inconclusive"
                program_error = _program_error(exc, root)
    finally:
        if os.getpid() != main_pid:  # a fork of the program (os.fork) that ran to the program's end: it ends here
            _end_fork(real_exit, exit_code or (0 if outcome == "completed" else 1))
        seconds = time.perf_counter() - t0
        if status is not None:
            status.stop()
        os._exit = real_exit
        if emu.time_limit:
            signal.setitimer(signal.ITIMER_REAL, 0)
        unwatch()
        unplace()
        numerics.uninstall()
        emu.uninstall()
        unspawn()
        children = spawned.children(read_reports(report_path), main_pid)
        try:
            os.unlink(report_path)
        except OSError:
            pass
    if tests and error is None:
        from mpsready.run.attached import attached_failures

        marked = attached_failures()  # tests that ended on a failure the emulator only marked
        if marked:
            outcome, program_error = "failed", None
            error = {k: marked[0][k] for k in ("kind", "exception", "message", "location", "op", "dtype", "mac")}
    first_child = children.pop("first_failure", None)
    if error is None and not emu.failures and first_child is not None and outcome != "failed":
        # a child's Mac failure is the program's on a Mac too, whatever the program made of it (a fork's exit
        # status read as its own error, a failure caught in a worker): issue 34 item 6
        outcome, program_error, error = "failed", None, first_child
    if emu.failures:
        outcome = "failed"  # the program caught a predicted failure, or went on (--keep-going) and stopped later
    if outcome == "stopped" and spec.get("time_limit_default") and (emu.stop_reason or "").startswith("--time-limit"):
        emu.stop_reason = (f"stopped by the default time limit of {emu.time_limit:g} s (--time-limit S to change "
                           "it, 0 for none)")
    return {"emu": emu, "outcome": outcome, "exit_code": exit_code, "error": error, "program_error": program_error,
            "seconds": seconds, "numerics": numerics, "children": children}


def _end_fork(real_exit, status: int) -> None:
    """The end of a process the program forked that ran on to the program's end (``os.fork`` without
    ``os._exit``): its output flushed and its account written (:func:`mpsready.run.spawned.report_child`), then
    it exits with ``status`` as Python would; it never writes the run's result (the program's process does)."""
    from mpsready.run.spawned import report_child

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    report_child()
    real_exit(status)


def _start_status(spec: dict[str, Any], emu):
    """The started :class:`~mpsready.run.status.StatusWriter` of ``spec["status"]`` (the parent prints a status
    line from it), or ``None`` when the parent asked for none."""
    if not spec.get("status"):
        return None
    from mpsready.run.status import StatusWriter

    writer = StatusWriter(spec["status"], emu)
    writer.start()
    return writer


def _on_os_exit(spec: dict[str, Any], emu, t0: float, real_exit):
    """``os._exit`` for the program: the result so far is written (the status is the program's exit, said in
    ``program_exit``), then the process ends as the program asked. Only in this process: a forked child of the
    program exits plainly."""
    pid = os.getpid()

    def program_exit(status):
        if os.getpid() != pid:  # a forked child's end (multiprocessing's fork start method ends so): its account
            from mpsready.run.spawned import report_child

            report_child()
        elif spec.get("out"):
            try:
                code = int(status)
                note = f"the program ended its process with os._exit({code}); nothing ran after it"
                program_error = None if code == 0 else {
                    "kind": "exit", "exception": "os._exit", "op": None, "dtype": None, "mac": False,
                    "message": f"the program exited with status {code} (os._exit)", "missing": None,
                    "location": None}
                _write_result(spec, {"emu": emu, "outcome": "completed" if code == 0 else "inconclusive",
                                     "exit_code": code, "error": None, "program_error": program_error,
                                     "seconds": time.perf_counter() - t0,
                                     "program_exit": {"how": "os._exit", "status": code, "note": note}})
            except BaseException:  # noqa: BLE001 - the program's exit must happen whatever the report does
                pass
        real_exit(status)
    return program_exit


# bound before the program runs: a program that replaces json.dump / json.JSONEncoder in its process (the same
# module object as this runner's) used to cost the run its result, read as an exit outside Python (issue 34)
_ENCODER = json.JSONEncoder


def _write_result(spec: dict[str, Any], result: dict[str, Any]) -> None:
    doc = build_document(spec, result)
    tmp = spec["out"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        for chunk in _ENCODER(indent=1).iterencode(doc):
            fh.write(chunk)
    os.replace(tmp, spec["out"])


def _child_failure(report_path: str) -> dict[str, Any] | None:
    """The first Mac failure a spawned child of the program reported (:mod:`mpsready.run.spawned`), shaped as a
    run document's failure (``kind`` ``spawn`` for a main module without a main guard, with the fix)."""
    for entry in read_reports(report_path):
        if entry.get("kind") == "child":  # an account (spawned.report_child): read by spawned.children
            continue
        message = entry.get("message") or ""
        if entry.get("fix"):
            message = f"{message} (raised in the spawned child process; {entry['fix']})"
        return {"kind": entry.get("kind") or "spawn", "exception": entry.get("exception") or "RuntimeError",
                "message": message[:2000]}
    return None


def watch_fallback_variable(emu) -> Callable[[], None]:
    """PyTorch reads ``PYTORCH_ENABLE_MPS_FALLBACK`` once, when its library loads (MPSFallback.mm, a static
    initialiser; research note §2.3). Here torch is loaded before the program starts, so the program's first
    ``import torch`` (direct, or inside another package) stands for that moment: the variable's value then is
    what a Mac would use. A program that sets it after importing torch gets no fallback, as on a Mac."""
    import builtins

    real = builtins.__import__
    state = {"done": False}

    def watching(name, globals=None, locals=None, fromlist=(), level=0):
        if not state["done"] and level == 0 and (name == "torch" or name.startswith("torch.")):
            state["done"] = True
            builtins.__import__ = real
            fallback = os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") == "1"
            if fallback != emu.judge.fallback:
                emu.judge.set_fallback(fallback)
                if getattr(emu, "dispatch", None) is not None:
                    emu.dispatch.forget_plans()  # plans judged before hold the other answer
        return real(name, globals, locals, fromlist, level)

    builtins.__import__ = watching

    def undo():
        if builtins.__import__ is watching:
            builtins.__import__ = real
    return undo


def _alarm(emu):
    from mpsready.emulate import StopRun

    def handler(signum, frame):
        if emu.owner():
            emu.stop_reason = emu.stop_reason or f"--time-limit {emu.time_limit:g} s reached"
            raise StopRun(emu.stop_reason)
    return handler


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from mpsready.childproc import watch_parent

    watch_parent()  # started by mpsready run: the group ends when it does
    with open(argv[0], encoding="utf-8") as fh:
        spec = json.load(fh)
    try:
        result = run(spec)
    except ValueError as exc:  # a target without a table
        print(f"mpsready run: error: {exc}", file=sys.stderr)
        return CHILD_SETUP_ERROR
    _write_result(spec, result)
    return exit_quickly(CHILD_OK)


def exit_quickly(code: int) -> int:
    """End this process with ``code`` once the result is written, as the interpreter's exit would but without
    tearing down its modules (torch's teardown: 0.5-1.5 s per child; issue 39): the program's non-daemon threads
    are joined and its ``atexit`` handlers run (in Python's own order, Py_FinalizeEx), stdout and stderr flushed,
    then ``os._exit``. What is left out is only what no program may count on at exit: finalizers of objects still
    alive at interpreter teardown (Python docs, ``object.__del__``: not guaranteed to be called at exit)."""
    from mpsready.childproc import wind_down

    wind_down()
    os._exit(code)
    return code  # pragma: no cover - only where os._exit is replaced


if __name__ == "__main__":
    raise SystemExit(main())

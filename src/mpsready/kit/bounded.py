"""``python -m mpsready.kit.bounded RESULTS NAME SECONDS -- COMMAND...``: one step of ``run-on-mac.sh``, bounded in
time, run by the kit's script on the Mac (standard library only: it runs before anything is installed).

The command runs in its own session with its output in ``RESULTS/logs/NAME.log``; after ``SECONDS`` its whole
process group gets SIGTERM, then SIGKILL 10 s later, and the step exits 124 (as ``timeout(1)`` does; macOS ships
no ``timeout``). One JSON line per step goes to ``RESULTS/steps.jsonl``: ``name``, ``command``, ``exit``
(null when the command could not start), ``seconds``, ``timed_out``, ``error``. ``--skip REASON`` in place of
``-- COMMAND`` records a step that did not run, with why. Exits with the command's status; the script carries on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

GRACE = 10.0


def log_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "step"


def _kill(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_step(results: str, name: str, seconds: float, argv: list[str]) -> dict:
    """Run ``argv`` bounded by ``seconds``; returns the step's JSON line (also appended to steps.jsonl)."""
    os.makedirs(os.path.join(results, "logs"), exist_ok=True)
    log = os.path.join(results, "logs", log_name(name) + ".log")
    start = time.monotonic()
    step = {"name": name, "command": argv, "exit": None, "seconds": 0.0, "timed_out": False, "error": None}
    try:
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
            try:
                step["exit"] = proc.wait(seconds)
            except subprocess.TimeoutExpired:
                _kill(proc)
                step["exit"], step["timed_out"] = 124, True
            except KeyboardInterrupt:
                _kill(proc)
                raise
    except OSError as exc:
        step["error"] = f"could not start: {exc.strerror or exc}"
    step["seconds"] = round(time.monotonic() - start, 3)
    _append(results, step)
    return step


def _append(results: str, step: dict) -> None:
    with open(os.path.join(results, "steps.jsonl"), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(step) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) >= 5 and argv[3] == "--skip":
        _append(argv[0], {"name": argv[1], "command": None, "exit": None, "seconds": 0.0, "timed_out": False,
                          "error": None, "skipped": argv[4]})
        print(f"mpsready kit: {argv[1]}: skipped ({argv[4]})", file=sys.stderr)
        return 0
    if len(argv) < 5 or argv[3] != "--":
        print("usage: python -m mpsready.kit.bounded RESULTS NAME SECONDS -- COMMAND... | --skip REASON",
              file=sys.stderr)
        return 2
    step = run_step(argv[0], argv[1], float(argv[2]), argv[4:])
    state = "timed out" if step["timed_out"] else step["error"] or f"exit {step['exit']}"
    print(f"mpsready kit: {argv[1]}: {state} ({step['seconds']:.1f} s)", file=sys.stderr)
    return 124 if step["timed_out"] else (step["exit"] if isinstance(step["exit"], int) else 127)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Ctrl-C (SIGINT) to ``mpsready run --torch 2.3,2.13`` while the releases run (builder h40, 2026-12-07): a daemon a
program started in a new session (``setsid``) was left running, adopted by init: the interrupted matrix killed the
zygote's group (the monitors, which end what their job left) and nothing ended the orphans they had adopted. A
single run (``childproc.run_group``) and SIGTERM ended them. ``mpsready run`` now adopts them (a subreaper) and ends
them after closing the zygote."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.run.helpers import running as _running

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
LAUNCH = "import sys; del sys.path[0]; from mpsready.cli import main; sys.exit(main(sys.argv[1:]))"

DAEMON = """\
import os, subprocess, sys, time
code = ("import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    fd = os.open(os.devnull, os.O_RDWR)\\n"
        "    for i in (0, 1, 2):\\n        os.dup2(fd, i)\\n    open(%r, 'w').write(str(os.getpid()))\\n"
        "    time.sleep(120)\\n")
pid_file = os.path.join(sys.argv[1], "daemon-%d.pid" % os.getpid())
subprocess.run([sys.executable, "-c", code % pid_file])
time.sleep(120)
"""




@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's (prctl)")
@pytest.mark.parametrize(("sig", "fork"), [(signal.SIGINT, "1"), (signal.SIGTERM, "1"), (signal.SIGTERM, "0")])
def test_ctrl_c_of_a_release_matrix_ends_what_the_programs_left_in_new_sessions(tmp_path, sig, fork):
    # SIGTERM also killed mpsready run itself by its default action (the shell's "Terminated", no word of the runs);
    # with fresh interpreters (MPSREADY_ZYGOTE=0) the children are ended too, not waited for
    (tmp_path / "prog.py").write_text(DAEMON)
    marker = tmp_path / "pids"
    marker.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), MPSREADY_ZYGOTE=fork)
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, "run", "-q", "--torch", "2.3,2.13", "--", "python",
                             "prog.py", str(marker)], cwd=str(tmp_path), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    end = time.monotonic() + 120
    pids: list[int] = []
    while len(pids) < 2:
        assert time.monotonic() < end and proc.poll() is None, "the programs never started"
        time.sleep(0.1)
        pids = [int(t) for t in (p.read_text() for p in marker.glob("daemon-*.pid")) if t]
    try:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        end = time.monotonic() + 20
        while any(_running(p) for p in pids) and time.monotonic() < end:
            time.sleep(0.05)
        assert not [p for p in pids if _running(p)]
        assert proc.returncode == 128 + sig
        name = signal.Signals(sig).name
        assert err.decode().splitlines()[-1] == (
            f"mpsready run: interrupted by {name}; the releases and every process they started were ended")
    finally:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's (prctl)")
def test_ctrl_c_of_migrate_verify_ends_what_a_cpu_run_left_in_a_new_session(tmp_path):
    # the same with --verify's forked CPU run (its Runner closes the shared zygote)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                                      + DAEMON)
    marker = tmp_path / "pids"
    marker.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), MPSREADY_ZYGOTE="1")
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, "migrate", str(project), "--no-cache", "-q", "--verify",
                             "--", "python", "train.py", str(marker)], cwd=str(tmp_path), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    end = time.monotonic() + 120
    pids: list[int] = []
    while not pids:
        assert time.monotonic() < end and proc.poll() is None, "the program never started"
        time.sleep(0.1)
        pids = [int(t) for t in (p.read_text() for p in marker.glob("daemon-*.pid")) if t]
    try:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        end = time.monotonic() + 20
        while any(_running(p) for p in pids) and time.monotonic() < end:
            time.sleep(0.05)
        assert not [p for p in pids if _running(p)]
    finally:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

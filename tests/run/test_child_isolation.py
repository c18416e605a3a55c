"""Issue 22: ``run``'s child starts with the import path a Mac would have, and ends with its parent.

The parent is started as the ``mpsready`` console script starts it (``mpsready.cli.main``, nothing of the
current folder on its path); process checks read a real process listing (``ps``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
LAUNCH = "import sys; del sys.path[0]; from mpsready.cli import main; sys.exit(main(sys.argv[1:]))"

MPS_PROGRAM = 'import torch\nx = torch.ones(3, device="mps")\nprint("sum", (x * 2).sum().item(), x.device)\n'


def mpsready(cwd: Path, *args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.Popen([sys.executable, "-c", LAUNCH, *args], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def hostile_folder(tmp_path: Path) -> Path:
    """The current folder of the attacks: a ``json.py`` and a ``mpsready/`` package that end the process."""
    (tmp_path / "json.py").write_text('raise SystemExit("the user\'s json.py was imported")\n')
    (tmp_path / "mpsready").mkdir()
    (tmp_path / "mpsready" / "__init__.py").write_text('raise SystemExit("the user\'s mpsready/ was imported")\n')
    (tmp_path / "sub").mkdir()
    return tmp_path


def test_a_json_py_and_a_mpsready_package_in_the_current_folder_change_nothing(tmp_path):
    cwd = hostile_folder(tmp_path)
    (cwd / "helper.py").write_text("WHERE = 'cwd'\n")
    (cwd / "sub" / "helper.py").write_text("WHERE = 'script folder'\n")
    (cwd / "sub" / "prog.py").write_text(
        MPS_PROGRAM + "import os, sys\nimport helper\nprint('helper from', helper.WHERE)\n"
        "print('cwd on path', os.getcwd() in sys.path or '' in sys.path)\n")
    rc, out, err = finish(mpsready(cwd, "run", "--format", "json", "--", "python", "sub/prog.py"))
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["outcome"] == "completed"
    assert doc["mps_used"] is True
    # the program's own output (its stdout goes to stderr with --format json on stdout)
    assert "sum 6.0 mps:0" in err
    assert "helper from script folder" in err  # python sub/prog.py: the script's folder first
    assert "cwd on path False" in err  # and the current folder absent, as on a Mac
    assert "imported" not in err


def test_python_m_has_the_current_folder_then_pythonpath_and_still_the_real_emulator(tmp_path):
    cwd = hostile_folder(tmp_path)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "extra_mod.py").write_text("VALUE = 42\n")
    (cwd / "pkg").mkdir()
    (cwd / "pkg" / "__init__.py").write_text("")
    (cwd / "pkg" / "train.py").write_text(
        MPS_PROGRAM + "import os, sys, extra_mod\nprint('extra', extra_mod.VALUE, os.environ['PYTHONPATH'])\n"
        "print('first', sys.path[0] == os.getcwd(), sys.path[1])\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + str(lib))
    proc = subprocess.run([sys.executable, "-c", LAUNCH, "run", "--format", "json", "--", "python", "-m", "pkg.train"],
                          cwd=str(cwd), env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outcome"] == "completed"
    assert "sum 6.0 mps:0" in proc.stderr
    assert f"extra 42 {REPO / 'src'}{os.pathsep}{lib}" in proc.stderr  # restored for the program's subprocesses
    assert f"first True {REPO / 'src'}" in proc.stderr  # python -m: the current folder, then PYTHONPATH


def _live(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _ps_has(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if marker in line and line.split(None, 2)[1][:1] != "Z"]


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_the_child_ends_with_its_parent(tmp_path, how):
    marker = f"mpsready-loop-{uuid.uuid4().hex}"
    pidfile = tmp_path / "child.pid"
    (tmp_path / "loop.py").write_text(
        "import os, sys, time\n"
        f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "while True:\n    time.sleep(0.05)\n")
    proc = mpsready(tmp_path, "run", "--", "python", "loop.py", marker)
    end = time.time() + 120
    while not pidfile.exists() or not pidfile.read_text():
        assert time.time() < end and proc.poll() is None, "the program never started"
        time.sleep(0.1)
    child = int(pidfile.read_text())
    spec = open(f"/proc/{child}/cmdline", "rb").read().split(b"\0")[-2].decode()
    tmp = Path(spec).parent
    assert tmp.name.startswith("mpsready-run-") and tmp.is_dir()
    assert _ps_has(marker)
    proc.send_signal(how)
    rc, _out, err = finish(proc, 60)
    assert rc == (-how if how == signal.SIGKILL else 128 + how)
    end = time.time() + 20
    while _live(child) and time.time() < end:
        time.sleep(0.1)
    assert not _live(child)
    assert _ps_has(marker) == []
    end = time.time() + 10
    while tmp.exists() and time.time() < end:
        time.sleep(0.1)
    assert not tmp.exists()
    if how == signal.SIGTERM:
        assert err.strip().splitlines()[-1] == ("mpsready run: interrupted by SIGTERM; the program and every process "
                                                "it started were ended")


def test_signals_the_run_was_started_ignoring_stay_ignored(tmp_path):
    # nohup mpsready run ... &: the terminal's hang-up (SIGHUP) ended the run and its program, which plain
    # `nohup python prog.py &` survives (2026-12-07); SIGINT ignored too (a script's `cmd &`), as the program sees
    started = tmp_path / "started"
    (tmp_path / "prog.py").write_text(
        "import os, signal, time\n"
        "print('SIGHUP', signal.getsignal(signal.SIGHUP).name, 'SIGINT', signal.getsignal(signal.SIGINT).name)\n"
        f"open({str(started)!r}, 'w').close()\n"
        f"while os.path.exists({str(started)!r}):\n    time.sleep(0.05)\n"
        "print('done', flush=True)\n")

    def immune() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = mpsready(tmp_path, "run", "--format", "json", "--", "python", "prog.py", preexec_fn=immune)
    end = time.time() + 120
    while not started.exists():
        assert time.time() < end and proc.poll() is None, "the program never started"
        time.sleep(0.1)
    proc.send_signal(signal.SIGHUP)
    proc.send_signal(signal.SIGINT)
    time.sleep(1)
    assert proc.poll() is None  # neither ended the run
    started.unlink()  # the program ends on its own
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert json.loads(out)["outcome"] == "completed"
    assert "SIGHUP SIG_IGN SIGINT SIG_IGN" in err  # what `nohup python prog.py &` from a script sees
    assert "done" in err


def test_catch_leaves_an_ignored_signal_ignored():
    from mpsready.childproc import catch

    def handler(_signum, _frame):
        raise AssertionError("not called")

    old = {sig: signal.getsignal(sig) for sig in (signal.SIGHUP, signal.SIGUSR1)}
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        previous = catch((signal.SIGHUP, signal.SIGUSR1), handler)
        assert previous == {signal.SIGUSR1: signal.SIG_DFL}
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGUSR1) is handler
    finally:
        for sig, was in old.items():
            signal.signal(sig, was)


@pytest.mark.parametrize("target, message", [
    ("missing/x.json", "folder {tmp}/missing does not exist"),
    (".", "is a folder; give a file name"),
])
def test_output_is_checked_before_the_program_runs(tmp_path, target, message):
    (tmp_path / "prog.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    rc, _out, err = finish(mpsready(tmp_path, "run", "-o", target, "--", "python", "prog.py"))
    assert rc == 2
    assert err.strip().splitlines()[-1] == f"mpsready run: error: -o {target}: " + message.format(tmp=tmp_path)
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("status, rc, outcome", [(0, 0, "completed"), (2, 2, "inconclusive")])
def test_os_exit_is_the_programs_exit_and_is_said(tmp_path, status, rc, outcome):
    (tmp_path / "prog.py").write_text(f"import os, torch\nx = torch.ones(2, device='mps') + 1\nos._exit({status})\n")
    code, out, err = finish(mpsready(tmp_path, "run", "--format", "json", "--", "python", "prog.py"))
    assert code == rc, err
    doc = json.loads(out)
    assert doc["outcome"] == outcome
    assert doc["program_exit"] == {"how": "os._exit", "status": status,
                                   "note": f"the program ended its process with os._exit({status}); nothing ran after it"}
    assert f"mpsready run: the program ended its process with os._exit({status}); nothing ran after it" in err
    if status:
        assert doc["program_error"]["message"] == f"the program exited with status {status} (os._exit)"


def test_the_default_time_limit_stops_the_program_and_says_so(tmp_path, monkeypatch, capsys):
    from mpsready.cli import main
    from mpsready.run import cli as run_cli

    monkeypatch.setattr(run_cli, "DEFAULT_TIME_LIMIT", 1.5)
    (tmp_path / "prog.py").write_text("import time, torch\nwhile True:\n    x = torch.ones(2, device='mps') + 1\n"
                                      "    time.sleep(0.05)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--format", "json", "-o", "r.json", "--", "python", "prog.py"]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["outcome"] == "stopped"
    assert doc["stop_reason"] == "stopped by the default time limit of 1.5 s (--time-limit S to change it, 0 for none)"
    assert doc["settings"]["time_limit"] == 1.5


def test_time_limit_zero_is_no_limit_output_is_atomic_and_a_negative_limit_is_refused(tmp_path, monkeypatch):
    from mpsready.cli import main

    (tmp_path / "prog.py").write_text("print('done')\n")
    (tmp_path / "r.json").write_text("old")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--time-limit", "0", "--format", "json", "-o", "r.json", "--", "python", "prog.py"]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["settings"]["time_limit"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog.py", "r.json"]  # replaced by a rename, no temporary
    assert main(["run", "--time-limit", "-1", "--", "python", "prog.py"]) == 2


def _at_terminal(tmp_path, program: str):
    """``mpsready run -- python prog.py`` started on a pseudo-terminal it controls (as from a shell): the
    pid of ``mpsready run`` and the terminal's master side."""
    import pty

    (tmp_path / "prog.py").write_text(program)
    pid, master = pty.fork()
    if pid == 0:  # the child: a new session whose controlling terminal is the pty
        # as an interactive shell starts a foreground job: SIGINT and SIGQUIT at their default. This process may
        # have been started ignoring them (a suite run as `cmd &` from a script: POSIX shells start such a job so),
        # which the program would inherit and keep (Python: no KeyboardInterrupt), as it would without mpsready
        # run: every full-suite run launched so saw the Ctrl-C echoed and the program ticking on (2026-12-07)
        for sig in (signal.SIGINT, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-c", LAUNCH, "run", "--", "python", "prog.py"],
                  dict(os.environ, PYTHONPATH=str(REPO / "src")))
    return pid, master


def _read_until(master: int, text: str, seconds: float = 120) -> str:
    import select

    got = b""
    end = time.time() + seconds
    while text.encode() not in got and time.time() < end:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return got.decode(errors="replace")


def _status(pid: int, seconds: float = 60) -> int:
    end = time.time() + seconds
    while time.time() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError("mpsready run did not end")


def _ctrl_z_fg_ctrl_c(tmp_path):
    """An interactive program under ``mpsready run`` at a terminal: input, Ctrl-Z, fg, Ctrl-C; the terminal's
    output after the Ctrl-C and mpsready run's exit status."""
    tmp_path.mkdir()
    pid, master = _at_terminal(tmp_path, "import time\nname = input('name? ')\nprint('hello', name, flush=True)\n"
                                         "for i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)\n")
    try:
        assert "name? " in _read_until(master, "name? ")
        os.write(master, b"bob\n")  # the program holds the terminal: no SIGTTIN stop of a background group
        assert "hello bob" in _read_until(master, "tick 1")
        os.write(master, b"\x1a")  # Ctrl-Z: the program stops, and mpsready run stops with it (job control)
        end = time.time() + 20
        while time.time() < end and open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "T":
            time.sleep(0.1)
        assert open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "T"
        os.kill(pid, signal.SIGCONT)  # what the shell's fg does: the program goes on
        # Ticks printed before the stop may still be unread: wait until mpsready run has handed the terminal
        # back to the program's group (tpgid), else a Ctrl-C sent now reaches mpsready run (a race of the test).
        end = time.time() + 20
        while time.time() < end:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            if fields[0] != "T" and fields[5] != fields[2]:
                break
            time.sleep(0.05)
        assert fields[5] != fields[2]
        _read_until(master, "tick", 5)
        assert "tick" in _read_until(master, "tick", 20)
        os.write(master, b"\x03")  # Ctrl-C reaches the program (KeyboardInterrupt), as from a shell
        out = _read_until(master, "limits:")
        return out, _status(pid)
    finally:
        os.close(master)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_an_interactive_program_reads_the_terminal_and_gets_ctrl_c_and_ctrl_z(tmp_path):
    out, status = _ctrl_z_fg_ctrl_c(tmp_path / "run")
    assert "KeyboardInterrupt" in out
    assert "not a Mac failure" in out
    assert status == 2  # inconclusive: the program's own end

"""``mpsready run``'s children (issue 34 item 6): what the program starts in a new session (a ``setsid``
daemon) used to survive the run; ``run -- pytest -n 2`` ran the tests in xdist workers with no emulated Mac."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.run.helpers import running as _running

from mpsready.cli import main

ROOT = Path(__file__).resolve().parents[2]

DAEMON = """\
import os, subprocess, sys
# a double-forked daemon in a session of its own: outside the program's process group
code = ("import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    fd = os.open(os.devnull, os.O_RDWR)\\n"
        "    for i in (0, 1, 2):\\n        os.dup2(fd, i)\\n    open(%r, 'w').write(str(os.getpid()))\\n"
        "    time.sleep(60)\\n")
subprocess.run([sys.executable, "-c", code % sys.argv[1]])
import time
for _ in range(200):
    if os.path.exists(sys.argv[1]) and open(sys.argv[1]).read():
        break
    time.sleep(0.05)
print("started")
"""




@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's (prctl)")
def test_a_setsid_daemon_the_program_started_is_ended_with_the_run(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "prog.py").write_text(DAEMON)
    pid_file = tmp_path / "daemon.pid"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-m", "mpsready", "run", "-q", "--", sys.executable, "prog.py",
                           str(pid_file)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "started" in proc.stdout, proc.stderr
    pid = int(pid_file.read_text())
    end = time.monotonic() + 20
    while _running(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _running(pid)


@pytest.mark.parametrize("argv, shown", [
    (["pytest", "-n", "2"], "-n 2"),
    (["python", "-m", "pytest", "-q", "-n4"], "-n4"),
    (["pytest", "--numprocesses=auto", "tests"], "--numprocesses=auto"),
])
def test_pytest_with_xdist_workers_is_refused(tmp_path, capsys, monkeypatch, argv, shown):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--", *argv]) == 2
    assert capsys.readouterr().err == (f"mpsready run: error: pytest-xdist's {shown} runs the tests in workers the "
                                       "emulated Mac is not installed in: drop it (or give -n 0), or run `pytest "
                                       "--mps-emulate -n N`, whose workers each emulate the Mac\n")


def _run_doc(tmp_path, program: str) -> tuple[int, dict]:
    import json

    pytest.importorskip("torch")
    (tmp_path / "prog.py").write_text(program)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-m", "mpsready", "run", "-q", "--format", "json", "-o",
                           str(tmp_path / "doc.json"), "--", sys.executable, "prog.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads((tmp_path / "doc.json").read_text())


def test_a_program_that_closed_stdout_and_stderr_keeps_its_mac_failure(tmp_path):
    code, doc = _run_doc(tmp_path, "import os, torch\nos.close(1)\nos.close(2)\n"
                                   "torch.ones(2, dtype=torch.float64, device='mps')\n")
    assert code == 1  # used to be exit 3 with no document: the traceback's write to fd 2 raised
    assert (doc["outcome"], doc["first_failure"]["kind"], doc["first_failure"]["location"]["line"]) == \
        ("failed", "dtype", 4)


def test_a_thread_started_with__thread_runs_on_the_emulated_mac(tmp_path):
    code, doc = _run_doc(tmp_path, "import _thread, time, torch\nres = []\n"
                                   "def work():\n    res.append(torch.ones(2, device='mps').device.type)\n"
                                   "_thread.start_new_thread(work, ())\n"
                                   "for _ in range(200):\n    if res:\n        break\n    time.sleep(0.05)\n"
                                   "assert res == ['mps'], res\n")
    assert (code, doc["outcome"], doc["mps_used"]) == (0, "completed", True)


def test_a_mac_failure_in_a_torch_multiprocessing_spawn_child_is_the_macs(tmp_path):
    code, doc = _run_doc(tmp_path, "import torch, torch.multiprocessing as tmp\n"
                                   "def work(rank):\n    torch.ones(2, dtype=torch.float64, device='mps')\n"
                                   "if __name__ == '__main__':\n    tmp.spawn(work, nprocs=1)\n")
    # torch's _wrap catches the child's error and exits 1: it used to be the program's own (inconclusive)
    assert code == 1
    assert (doc["outcome"], doc["first_failure"]["kind"], doc["first_failure"]["exception"]) == \
        ("failed", "dtype", "TypeError")


FORK_PROCESS = ("import multiprocessing as mp, sys, torch\n"
                "def work():\n    torch.ones(2, dtype=torch.float64, device='mps')\n"
                "if __name__ == '__main__':\n    p = mp.get_context('fork').Process(target=work)\n"
                "    p.start()\n    p.join()\n    sys.exit(p.exitcode)\n")


def test_a_mac_failure_in_a_forked_child_is_the_macs_not_the_programs_exit(tmp_path):
    code, doc = _run_doc(tmp_path, FORK_PROCESS)
    # the child's exit status 1 used to be read as the program's own error: inconclusive, exit 2
    assert code == 1
    first = doc["first_failure"]
    assert (doc["outcome"], first["kind"], first["exception"], first["location"]["line"], first["mac"]) == \
        ("failed", "dtype", "TypeError", 3, True)
    assert first["message"].endswith("Please use float32 instead. (raised in a child process of the program, pid "
                                     f"{first['message'].rsplit('pid ', 1)[1]}")
    assert (doc["children"], doc["mps_used"]) == ({"reported": 1, "mps_used": 1, "failed": 1}, True)


def test_an_os_fork_child_that_runs_to_the_end_never_writes_the_result_and_its_failure_counts(tmp_path):
    code, doc = _run_doc(tmp_path, "import os, torch\npid = os.fork()\nif pid == 0:\n    print('child', flush=True)\n"
                                   "    torch.ones(2, dtype=torch.float64, device='mps')\n"
                                   "if pid:\n    os.waitpid(pid, 0)\n    print('parent')\n")
    # the forked copy used to unwind into mpsready's own runner and write the result (exit 0, 'completed')
    assert code == 1
    assert (doc["outcome"], doc["first_failure"]["kind"], doc["first_failure"]["location"]["line"]) == \
        ("failed", "dtype", 5)
    assert doc["children"] == {"reported": 1, "mps_used": 1, "failed": 1}


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_mps_use_in_a_pool_worker_counts_as_the_programs(tmp_path, method):
    code, doc = _run_doc(tmp_path, "import multiprocessing as mp, torch\n"
                                   "def work(_):\n    return torch.ones(2, device='mps').sum().item()\n"
                                   f"if __name__ == '__main__':\n    with mp.get_context({method!r}).Pool(1) as p:\n"
                                   "        assert p.map(work, [0]) == [2.0]\n")
    # only the worker put a tensor on MPS: mps_used used to be false ("on a Mac this runs on the CPU")
    assert (code, doc["outcome"], doc["mps_used"], doc["children"]) == \
        (0, "completed", True, {"reported": 1, "mps_used": 1, "failed": 0})


def test_a_forked_worker_ended_by_sigterm_ends_alone_not_the_run(tmp_path):
    # the fork inherited the run's watchdog handler: Pool.terminate's SIGTERM to a busy worker killed the whole
    # run and removed its result folder (no document)
    code, doc = _run_doc(tmp_path, "import multiprocessing as mp, time, torch\n"
                                   "def work(_):\n    torch.ones(1, device='mps')\n    time.sleep(30)\n"
                                   "if __name__ == '__main__':\n    p = mp.get_context('fork').Pool(1)\n"
                                   "    p.map_async(work, [0])\n    time.sleep(3)\n    p.terminate()\n    print('ended')\n")
    assert (code, doc["outcome"], doc["mps_used"], doc["children"]) == \
        (0, "completed", True, {"reported": 1, "mps_used": 1, "failed": 0})


def test_a_program_that_breaks_json_in_its_process_keeps_its_mac_failure(tmp_path):
    # the runner writes the result in the program's process: json.dump = None there used to lose the document
    # (exit 3, "ended its process outside Python's exit")
    code, doc = _run_doc(tmp_path, "import json, torch\njson.dump = json.dumps = json.JSONEncoder = None\n"
                                   "torch.ones(2, dtype=torch.float64, device='mps')\n")
    assert (code, doc["outcome"], doc["first_failure"]["kind"], doc["first_failure"]["location"]["line"]) == \
        (1, "failed", "dtype", 3)


def test_a_childs_report_is_never_written_through_a_planted_link(tmp_path, monkeypatch):
    # the pytest plugin's report file has a predictable name in TMPDIR: a link planted there was appended to
    from mpsready.run import spawned

    victim = tmp_path / "victim"
    victim.write_text("theirs")
    os.symlink(victim, tmp_path / "report.jsonl")
    monkeypatch.setenv(spawned.REPORT_VAR, str(tmp_path / "report.jsonl"))
    spawned._report({"kind": "child", "pid": 1, "mps_used": True, "failure": None})
    assert victim.read_text() == "theirs"
    monkeypatch.setenv(spawned.REPORT_VAR, str(tmp_path / "real.jsonl"))
    spawned._report({"kind": "child", "pid": 1, "mps_used": True, "failure": None})
    assert spawned.read_reports(str(tmp_path / "real.jsonl")) == [
        {"kind": "child", "pid": 1, "mps_used": True, "failure": None}]

"""Issue 39 item 1: the release matrix forks each release's child from one zygote (``mpsready.run.zygote``); every
isolation guarantee of a spawned child holds in the forked one: the same environment, working folder, ``argv`` and
``sys.path`` as a spawned child (so as a plain run), nothing of the user's importable by mpsready's own code, a
session and process group of its own, nothing left running, and an end with ``mpsready run``."""

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

from tests.run.helpers import running as _running

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote forks on Linux only")

REPO = Path(__file__).resolve().parents[2]
LAUNCH = "import sys; del sys.path[0]; from mpsready.cli import main; sys.exit(main(sys.argv[1:]))"

# what the program can see of how it was started, one file per process (the release is not visible to it)
PROBE = """\
import json, os, sys, torch
import helper
x = torch.ones(2, device="mps")
# the spawn report's file (run/spawned.py) is named after the process: present, its name differs
state = {"env": {k: v for k, v in os.environ.items() if k not in ("MPSREADY_ZYGOTE", "MPSREADY_SPAWN_REPORT")},
         "spawn_report": "MPSREADY_SPAWN_REPORT" in os.environ,
         "cwd": os.getcwd(), "argv": sys.argv, "path": sys.path, "helper": helper.WHERE,
         "argv0": sys.argv[0], "argv1": os.path.basename(sys.argv[1]) in ("forked", "spawned"), "session_leader": os.getsid(0) == os.getpid(), "group_leader": os.getpgrp() == os.getpid(),
         "stdin": os.read(0, 10), "mps": str(x.device), "main": __name__,
         "json_module": json.__file__, "random": __import__("random").random()}
state["stdin"] = state["stdin"].decode()
with open(os.path.join(sys.argv[1], f"probe-{os.getpid()}.json"), "w") as fh:
    json.dump(state, fh)
"""


def _hostile(tmp_path: Path) -> Path:
    """A current folder whose ``json.py`` and ``mpsready/`` would end any process that imported them."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "json.py").write_text('raise SystemExit("the user\'s json.py was imported")\n')
    (tmp_path / "mpsready").mkdir()
    (tmp_path / "mpsready" / "__init__.py").write_text('raise SystemExit("the user\'s mpsready/ was imported")\n')
    (tmp_path / "helper.py").write_text("WHERE = 'cwd'\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "helper.py").write_text("WHERE = 'script folder'\n")
    return tmp_path


def _matrix(cwd: Path, out: Path, zygote: bool, *program: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + "/user/lib", MPSREADY_ZYGOTE="1" if zygote
               else "0")
    return subprocess.run([sys.executable, "-c", LAUNCH, "run", "--torch", "2.3,2.13", "--format", "json", "-o",
                           str(out), "--", *program], cwd=str(cwd), env=env, capture_output=True, text=True,
                          timeout=300)


def _probes(folder: Path) -> list[dict]:
    """The probes of one run, in the order of their releases (run/spawned.py's spec names each one's)."""
    probes = [json.loads(p.read_text()) for p in folder.glob("probe-*.json")]
    return sorted(probes, key=lambda p: p["env"]["MPSREADY_SPAWN_SPEC"])


@pytest.fixture()
def probe_runs(tmp_path):
    cwd = _hostile(tmp_path / "project")
    (cwd / "sub" / "prog.py").write_text(PROBE)
    runs = {}
    for zygote in (True, False):
        folder = tmp_path / ("forked" if zygote else "spawned")
        folder.mkdir()
        proc = _matrix(cwd, tmp_path / f"{folder.name}.json", zygote, "python", "sub/prog.py", str(folder))
        runs[zygote] = (proc, _probes(folder), json.loads((tmp_path / f"{folder.name}.json").read_text()))
    return cwd, runs


def test_forked_and_spawned_releases_see_the_same_process(probe_runs):
    cwd, runs = probe_runs
    for proc, probes, doc in runs.values():
        assert proc.returncode == 0, proc.stderr
        assert [r["outcome"] for r in doc["releases"]] == ["completed", "completed"]
        assert "imported" not in proc.stderr
        assert len(probes) == 2
    forked, spawned = runs[True][1], runs[False][1]
    for key in ("env", "cwd", "argv0", "argv1", "path", "helper", "session_leader", "group_leader", "stdin", "mps", "main",
                "json_module", "spawn_report"):
        assert [p[key] for p in forked] == [p[key] for p in spawned], (key, [p[key] for p in forked][0],
                                                                       [p[key] for p in spawned][0])
    one = forked[0]
    assert one["cwd"] == str(cwd)
    # runpy.run_path gives argv[0] the script's absolute path in either (python itself keeps it as typed)
    assert one["argv"] == [str(cwd / "sub" / "prog.py"), str(cwd.parent / "forked")]
    assert one["path"][:3] == [str(cwd / "sub"), str(REPO / "src"), "/user/lib"]  # the script's folder, PYTHONPATH
    assert one["env"]["PYTHONPATH"] == str(REPO / "src") + os.pathsep + "/user/lib"
    # mpsready's own plumbing is gone by the time the program runs (run/spawned.py's spec stays for its children)
    assert [k for k in one["env"] if k.startswith("MPSREADY_")] == ["MPSREADY_SPAWN_SPEC"]
    assert one["helper"] == "script folder" and not one["json_module"].startswith(str(cwd))
    assert one["session_leader"] is True and one["group_leader"] is True  # a session and process group of its own
    assert one["stdin"] == "" and one["mps"] == "mps:0" and one["main"] == "__main__"
    assert forked[0]["random"] != forked[1]["random"]  # each forked release seeds random afresh, as a new process


DAEMON = """\
import os, subprocess, sys
code = ("import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    fd = os.open(os.devnull, os.O_RDWR)\\n"
        "    for i in (0, 1, 2):\\n        os.dup2(fd, i)\\n    open(%r, 'w').write(str(os.getpid()))\\n"
        "    time.sleep(60)\\n")
pid_file = os.path.join(sys.argv[1], "daemon-%d.pid" % os.getpid())
subprocess.run([sys.executable, "-c", code % pid_file])
# left running in the program's group, named by this test's folder
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", sys.argv[1]])
import time
for _ in range(200):
    if os.path.exists(pid_file) and open(pid_file).read():
        break
    time.sleep(0.05)
print("started")
"""




@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's (prctl)")
def test_what_a_forked_release_left_running_is_ended(tmp_path):
    (tmp_path / "prog.py").write_text(DAEMON)
    marker = tmp_path / "pids"
    marker.mkdir()
    proc = _matrix(tmp_path, tmp_path / "m.json", True, "python", "prog.py", str(marker))
    assert proc.returncode == 0, proc.stderr
    pids = [int(p.read_text()) for p in marker.glob("daemon-*.pid")]
    assert len(pids) == 2
    end = time.monotonic() + 20
    while any(_running(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.05)
    assert not [p for p in pids if _running(p)]
    assert subprocess.run(["pgrep", "-f", f"time.sleep\\(60\\) {marker}"], capture_output=True).stdout == b""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_forked_releases_and_the_zygote_end_with_mpsready_run(tmp_path):
    tag = uuid.uuid4().hex
    (tmp_path / "loop.py").write_text(
        "import os, sys, time\n"
        "open(os.path.join(sys.argv[1], f'{os.getpid()}.pid'), 'w').write(str(os.getppid()))\n"
        "while True:\n    time.sleep(0.05)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), MPSREADY_ZYGOTE="1")
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, "run", "--torch", "2.3,2.13", "--", "python", "loop.py",
                             str(tmp_path), tag], cwd=str(tmp_path), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    end = time.time() + 120
    while len(list(tmp_path.glob("*.pid"))) < 2:
        assert time.time() < end and proc.poll() is None, "the programs never started"
        time.sleep(0.1)
    jobs = [int(p.stem) for p in tmp_path.glob("*.pid")]
    monitors = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    zygotes = {int(open(f"/proc/{m}/stat").read().rsplit(")", 1)[1].split()[1]) for m in monitors}
    assert len(zygotes) == 1 and zygotes != {proc.pid}  # one zygote, the parent of both monitors
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    end = time.time() + 20
    while any(_running(p) for p in [*jobs, *monitors, *zygotes]) and time.time() < end:
        time.sleep(0.1)
    assert not [p for p in [*jobs, *monitors, *zygotes] if _running(p)]


def test_a_zygote_that_does_not_start_leaves_the_releases_to_fresh_interpreters(tmp_path, monkeypatch):
    from mpsready.run import matrix, zygote

    monkeypatch.setattr(zygote.Zygote, "start", lambda self: False)
    (tmp_path / "p.py").write_text("print('ran')\n")
    from mpsready.run.command import parse_program

    prog = parse_program(["python", str(tmp_path / "p.py")])

    def make_spec(req, out):
        return {"program": {**prog.to_dict(), "root": prog.root}, "target": {"torch": req, "macos": "15.5",
                                                                             "fallback": False},
                "keep_going": False, "max_steps": None, "time_limit": None, "out": out, "nan_check": True}

    runs = matrix.run_releases([("2.13", "2.13.0")], make_spec, dict(os.environ, PYTHONPATH=str(REPO / "src")),
                               fork=True)
    assert [(r.outcome, r.status, r.output) for r in runs] == [("completed", 0, "ran\n")]

"""Issue 39 item 1: every run of ``migrate --verify`` (the CPU runs of the original and the migrated copy, and each
release's emulated Mac run) is forked from one zygote that imported torch once (``mpsready.migrate.verify_runs``,
``mpsready.run.plain``); what a fresh process gave each run, the forked one has: the same environment, working
folder, ``sys.path``, ``sys.argv``, ``sitecustomize``, exit status and traceback, a session and process group of its
own, nothing left running, its deadline; a program folder holding a module only mpsready imported runs fresh."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tests.run.helpers import running as _running

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote forks on Linux only")

from mpsready.migrate.verify_runs import SITE, Runner  # noqa: E402
from mpsready.run.plain import shadowed  # noqa: E402

# what the program can see of how it was started
PROBE = """\
import json, os, random, sys, torch
import helper
state = {"env": {k: v for k, v in os.environ.items() if k != "MPSREADY_VERIFY_DIGEST"},
         "cwd": os.getcwd(), "argv": sys.argv, "path": [p for p in sys.path], "helper": helper.WHERE,
         "session_leader": os.getsid(0) == os.getpid(), "group_leader": os.getpgrp() == os.getpid(),
         "stdin": os.read(0, 10).decode(), "main": __name__, "file": __file__,
         "json_module": json.__file__, "random": random.random(), "torch_seed": torch.initial_seed(),
         "hash": hash("mpsready"), "site": sys.modules["sitecustomize"].__file__,
         "threads": torch.get_num_threads(), "yaml_loaded": "yaml" in sys.modules,
         "torch_state": [torch.backends.mps.is_available(), torch.cuda.is_available(), str(torch.get_default_dtype()),
                         torch.are_deterministic_algorithms_enabled(), str(torch.ones(1).device)]}
print(json.dumps(state))
"""


def _project(tmp_path: Path) -> Path:
    """A program folder whose ``json.py`` would end any process that imported it from there, and a helper module in
    the folder the command runs from and in the script's folder (which one a run finds tells its ``sys.path``)."""
    cwd = tmp_path / "project"
    (cwd / "sub").mkdir(parents=True)
    (cwd / "json.py").write_text('raise SystemExit("the project\'s json.py was imported")\n')
    (cwd / "helper.py").write_text("WHERE = 'cwd'\n")
    (cwd / "sub" / "helper.py").write_text("WHERE = 'script folder'\n")
    (cwd / "sub" / "prog.py").write_text(PROBE)
    (cwd / "sub" / "fails.py").write_text("import sys\nprint('before')\ndef f():\n    raise ValueError('no')\nf()\n")
    (cwd / "sub" / "exits.py").write_text("raise SystemExit('bye')\n")
    return cwd


def _runner(tmp_path: Path, name: str, forked: bool, monkeypatch, releases=("2.13",)) -> tuple[Runner, Path]:
    monkeypatch.setenv("MPSREADY_ZYGOTE", "1" if forked else "0")
    if not os.environ.get("PYTHONPATH", "").endswith("/user/lib"):
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), "/user/lib"])))
    base = tmp_path / name
    base.mkdir()
    runner = Runner(base, list(releases))
    site = base / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE)
    assert (runner.zygote is not None) == forked
    return runner, site


@pytest.fixture()
def both(tmp_path, monkeypatch):
    """The same runs made forked and fresh: {True: (runner, site), False: ...}; closed at the end."""
    out = {forked: _runner(tmp_path, f"base-{forked}", forked, monkeypatch) for forked in (True, False)}
    yield out
    for runner, _site in out.values():
        runner.close()


def test_a_forked_cpu_run_sees_what_a_fresh_process_saw(tmp_path, both):
    cwd = _project(tmp_path)
    seen = {}
    for forked, (runner, site) in both.items():
        run = runner.cpu(cwd, ["python", "sub/prog.py", "an arg"], site, 3, 60)
        assert (run.exit_code, run.stderr_tail) == (0, "")
        assert runner.forked == (1 if forked else 0)
        seen[forked] = json.loads(run.stdout)
    forked, fresh = seen[True], seen[False]
    fresh["path"] = [str(both[True][1]) if p == str(both[False][1]) else p for p in fresh["path"]]  # each its site
    for key in ("cwd", "path", "helper", "session_leader", "group_leader", "stdin", "main", "file", "json_module",
                "random", "torch_seed", "hash", "threads", "torch_state"):
        assert forked[key] == fresh[key], key
    fresh["env"]["PYTHONPATH"] = fresh["env"]["PYTHONPATH"].replace(str(both[False][1]), str(both[True][1]))
    assert forked["env"] == fresh["env"]
    assert forked["cwd"] == str(cwd) and forked["helper"] == "script folder"
    user_path = os.environ["PYTHONPATH"].split(os.pathsep)
    assert forked["path"][:2 + len(user_path)] == [str(cwd / "sub"), str(both[True][1]), *user_path]
    assert forked["site"] == str(both[True][1] / "sitecustomize.py")
    assert fresh["site"] == str(both[False][1] / "sitecustomize.py")
    assert forked["session_leader"] is True and forked["group_leader"] is True and forked["stdin"] == ""
    assert forked["main"] == "__main__" and forked["file"] == str(cwd / "sub" / "prog.py")
    assert not forked["json_module"].startswith(str(cwd))
    # the modules only mpsready imported are imported already (a folder that holds one of them runs fresh: below)
    assert (forked["yaml_loaded"], fresh["yaml_loaded"]) == (True, False)
    assert forked["random"] == fresh["random"] and forked["torch_seed"] == 0  # seeded by --verify's sitecustomize
    # and sys.argv[0] is the script's absolute path (as mpsready run gives it), as typed in a fresh one
    assert forked["argv"] == [str(cwd / "sub" / "prog.py"), "an arg"] and fresh["argv"] == ["sub/prog.py", "an arg"]
    # mpsready's own plumbing is gone by the time the program runs (the zygote's and the watchdog's)
    assert {k for k in forked["env"] if k.startswith("MPSREADY_")} - set(os.environ) == {"MPSREADY_VERIFY_MAX_STEPS"}
    assert forked["env"]["CUDA_VISIBLE_DEVICES"] == "" and forked["env"]["PYTHONHASHSEED"] == "0"
    assert forked["torch_state"] == [False, False, "torch.float32", False, "cpu"]  # no emulated Mac in a CPU run


def test_exit_status_and_traceback_are_a_fresh_interpreters(tmp_path, both):
    cwd = _project(tmp_path)
    got = {}
    for forked, (runner, site) in both.items():
        fails = runner.cpu(cwd, ["python", "sub/fails.py"], site, 3, 60)
        exits = runner.cpu(cwd, ["python", "sub/exits.py"], site, 3, 60)
        got[forked] = [(r.exit_code, r.stdout, r.stderr_tail, r.line) for r in (fails, exits)]
    assert got[True] == got[False]
    (code, out, err, line), exits = got[True]
    assert (code, out, line) == (1, "before\n", "sub/fails.py:4")
    assert err.startswith(f'Traceback (most recent call last):\n  File "{cwd / "sub" / "fails.py"}", line 5, in '
                          "<module>\n") and err.endswith("ValueError: no\n")
    assert exits == (1, "", "bye\n", None)


def test_a_module_run_and_the_step_limit_and_digest(tmp_path, both):
    cwd = _project(tmp_path)
    (cwd / "pkg").mkdir()
    (cwd / "pkg" / "__init__.py").write_text("")
    (cwd / "pkg" / "train.py").write_text(
        "import sys, torch\nimport helper\nprint(helper.WHERE, sys.argv[1:])\nm = torch.nn.Linear(3, 1)\n"
        "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nfor i in range(10):\n    opt.zero_grad()\n"
        "    m(torch.ones(2, 3)).sum().backward()\n    opt.step()\n    print('step', i)\n")
    runs = {forked: runner.cpu(cwd, ["python", "-m", "pkg.train", "x"], site, 3, 60)
            for forked, (runner, site) in both.items()}
    assert both[True][0].forked == 1
    one, two = runs[True], runs[False]
    assert (one.exit_code, one.steps, one.parameters, one.stdout) == (0, 3, 4, "cwd ['x']\nstep 0\nstep 1\n")
    assert (one.sha256, one.norms) == (two.sha256, two.norms) and one.sha256 is not None


def test_a_folder_with_a_module_only_mpsready_imported_runs_fresh(tmp_path, both):
    cwd = _project(tmp_path)
    (cwd / "sub" / "yaml.py").write_text("WHO = 'the project'\n")
    (cwd / "sub" / "uses_yaml.py").write_text("import yaml\nprint(yaml.WHO)\n")
    runner, site = both[True]
    assert "yaml" in runner.ready().loaded["extra"]  # the tables' reader imported it in the zygote
    run = runner.cpu(cwd, ["python", "sub/uses_yaml.py"], site, 3, 60)
    assert (run.exit_code, run.stdout, runner.forked) == (0, "the project\n", 0)
    # a command that is not this interpreter running a script or a module runs fresh too
    run = runner.cpu(cwd, ["python", "-u", "sub/exits.py"], site, 3, 60)
    assert (run.exit_code, run.stderr_tail, runner.forked) == (1, "bye\n", 0)


def test_shadowed_names_modules_packages_and_extensions_not_namespace_folders(tmp_path):
    (tmp_path / "yaml").mkdir()  # a namespace folder: a regular module later on the path wins over it
    (tmp_path / "packaging").mkdir()
    assert shadowed([str(tmp_path)], ["yaml", "packaging"]) is None
    (tmp_path / "packaging" / "__init__.py").write_text("")
    assert shadowed([str(tmp_path)], ["yaml", "packaging"]) == str(tmp_path / "packaging")
    (tmp_path / "yaml.cpython-311-x86_64-linux-gnu.so").write_text("")
    assert shadowed([str(tmp_path)], ["yaml"]) == str(tmp_path / "yaml.cpython-311-x86_64-linux-gnu.so")
    assert shadowed([str(tmp_path / "missing")], ["yaml"]) is None




DAEMON = """\
import os, subprocess, sys, time
code = ("import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    fd = os.open(os.devnull, os.O_RDWR)\\n"
        "    for i in (0, 1, 2):\\n        os.dup2(fd, i)\\n    open(%r, 'w').write(str(os.getpid()))\\n"
        "    time.sleep(60)\\n")
pid_file = os.path.join(sys.argv[1], "daemon.pid")
subprocess.run([sys.executable, "-c", code % pid_file])
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open(os.path.join(sys.argv[1], "child.pid"), "w").write(str(p.pid))
for _ in range(200):
    if os.path.exists(pid_file) and open(pid_file).read():
        break
    time.sleep(0.05)
"""


def test_what_a_forked_run_left_running_is_ended_and_its_deadline_kept(tmp_path, monkeypatch):
    runner, site = _runner(tmp_path, "base", True, monkeypatch)
    try:
        (tmp_path / "daemon.py").write_text(DAEMON)
        run = runner.cpu(tmp_path, ["python", "daemon.py", str(tmp_path)], site, 3, 60)
        assert (run.exit_code, runner.forked) == (0, 1)
        pids = [int((tmp_path / name).read_text()) for name in ("daemon.pid", "child.pid")]
        end = time.monotonic() + 20
        while any(_running(p) for p in pids) and time.monotonic() < end:
            time.sleep(0.05)
        assert not [p for p in pids if _running(p)]
        (tmp_path / "sleeps.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
        t0 = time.monotonic()
        run = runner.cpu(tmp_path, ["python", "sleeps.py"], site, 3, 2)
        assert (run.timed_out, run.exit_code, run.stdout) == (True, None, "started\n")
        assert time.monotonic() - t0 < 30
    finally:
        runner.close()


def test_the_emulated_mac_runs_are_forked_with_their_progress_lines(tmp_path, monkeypatch):
    cwd = _project(tmp_path)
    (cwd / "sub" / "mac.py").write_text(
        "import json, os, sys, torch\nimport helper\nx = torch.ones(2, device='mps')\n"
        "json.dump({'cwd': os.getcwd(), 'helper': helper.WHERE, 'path0': sys.path[0], 'device': str(x.device),"
        " 'cuda': os.environ.get('CUDA_VISIBLE_DEVICES'), 'user_path': os.environ.get('PYTHONPATH'),"
        " 'leader': os.getpgrp() == os.getpid()}, open(sys.argv[1], 'w'))\n")
    seen = {}
    for forked in (True, False):  # forked from the zygote, and fresh (MPSREADY_ZYGOTE=0): the same run
        lines: list[str] = []
        runner, _site = _runner(tmp_path, f"base-{forked}", forked, monkeypatch, releases=["2.13", "9.9"])
        try:
            runs = runner.mac(cwd, ["python", "sub/mac.py", str(tmp_path / f"seen-{forked}.json")], 3, 60,
                              tmp_path / f"base-{forked}", lines.append)
        finally:
            runner.close()
        assert runner.forked == (1 if forked else 0)
        assert [(r.torch, r.outcome, r.mps_used) for r in runs] == [("9.9", "no run document", False),
                                                                     ("2.13.0", "completed", True)]
        assert runs[0].reason.startswith("mpsready run exited 2 without a run document: mpsready run: error: "
                                         "--torch release '9.9': ")
        assert lines[0] == "verify: emulated Mac, torch 2.13: started"
        assert lines[1].startswith("verify: emulated Mac, torch 2.13: ended, completed (") and len(lines) == 2
        assert json.loads((tmp_path / f"base-{forked}" / "run-2.13.json").read_text())["outcome"] == "completed"
        seen[forked] = json.loads((tmp_path / f"seen-{forked}.json").read_text())
    assert seen[True] == seen[False] == {"cwd": str(cwd), "helper": "script folder", "path0": str(cwd / "sub"),
                                         "device": "mps:0", "cuda": "", "user_path": os.environ["PYTHONPATH"],
                                         "leader": True}


def test_verify_plan_forks_every_run(tmp_path, monkeypatch):
    from mpsready.migrate import verify_runs
    from mpsready.migrate.engine import migrate_path
    from mpsready.migrate.verify import verify_plan

    made: list[Runner] = []

    class Counting(Runner):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr("mpsready.migrate.verify.Runner", Counting)
    monkeypatch.setenv("MPSREADY_ZYGOTE", "1")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "train.py").write_text(
        "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "m = torch.nn.Linear(3, 1).to(device)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "for i in range(5):\n    opt.zero_grad()\n    m(torch.ones(2, 3, device=device)).sum().backward()\n"
        "    opt.step()\n")
    steps: list[str] = []

    def step(description):
        steps.append(description)
        from contextlib import nullcontext
        return nullcontext()

    result = verify_plan(migrate_path(tmp_path / "proj"), ["python", "train.py"], releases=["2.13"], max_steps=2,
                         time_limit=120, progress=step, release_line=steps.append)
    assert result.verified and [r.outcome for r in result.mac] == ["stopped"]
    assert made[0].forked == 3 and verify_runs.Runner is Runner  # 2 CPU runs and 1 emulated Mac run, all forked
    assert steps[:3] == ["loading PyTorch and the emulated Mac once, for every run", "the original on the CPU",
                         "the migrated copy on the CPU"]
    assert steps[3:5] == ["the migrated copy on the emulated Mac, torch 2.13",
                          "verify: emulated Mac, torch 2.13: started"]
    assert steps[5].startswith("verify: emulated Mac, torch 2.13: ended, stopped (") and len(steps) == 6


def test_a_verify_killed_during_the_emulated_mac_runs_ends_them_at_once(tmp_path):
    import signal
    import subprocess

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    pid_file = tmp_path / "pid"
    root = tmp_path / "proj"
    root.mkdir()
    # only the emulated Mac's run waits: the CPU runs end at once
    (root / "train.py").write_text(
        "import os, time, torch\nif torch.backends.mps.is_available():\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n    time.sleep(120)\n")
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"),
               MPSREADY_ZYGOTE="1")
    parent = subprocess.Popen([sys.executable, "-m", "mpsready", "migrate", str(root), "--no-cache", "--verify",
                               "--torch", "2.13", "--", "python", "train.py"], env=env, stderr=subprocess.PIPE,
                              stdout=subprocess.DEVNULL)
    end = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < end and parent.poll() is None, "the emulated Mac run never started"
        time.sleep(0.05)
    program = int(pid_file.read_text())
    t0 = time.monotonic()
    parent.send_signal(signal.SIGTERM)
    _, err = parent.communicate(timeout=60)
    assert parent.returncode == 143 and time.monotonic() - t0 < 30
    assert err.decode().endswith("mpsready migrate: interrupted by SIGTERM: the runs and every process they started "
                                 "were ended, the copies removed; nothing written\n")
    end = time.monotonic() + 20
    while (_running(program) or list(tmpdir.iterdir())) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _running(program) and list(tmpdir.iterdir()) == []


def test_a_notebooks_cpu_run_is_forked_and_runs_its_cells_as_a_fresh_one(tmp_path, both):
    from mpsready.migrate.verify_notebook import cpu_command

    cwd = _project(tmp_path)
    cells = ["import sys, torch\nimport helper\nprint(helper.WHERE, sys.argv[1:], __name__)\n",
             "m = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\nfor i in range(4):\n"
             "    opt.zero_grad()\n    m(torch.ones(2, 3)).sum().backward()\n    opt.step()\n",
             "raise ValueError('third cell')\n"]
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": c.splitlines(True)} for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (cwd / "sub" / "nb.ipynb").write_text(json.dumps(nb))
    runs = {forked: runner.cpu(cwd, cpu_command(["sub/nb.ipynb", "a"]), site, 0, 60)
            for forked, (runner, site) in both.items()}
    assert both[True][0].forked == 1
    one, two = runs[True], runs[False]
    assert (one.exit_code, one.stdout, one.steps, one.line) == (1, "script folder ['a'] __main__\n", 4,
                                                                "sub/nb.ipynb:cell 3:line 1")
    assert (one.exit_code, one.stdout, one.steps, one.sha256, one.line) == \
        (two.exit_code, two.stdout, two.steps, two.sha256, two.line)
    assert one.stderr_tail.endswith("ValueError: third cell\n") and two.stderr_tail.endswith("ValueError: third cell\n")

"""Issue 38: progress on every wait over a second. Per release of ``run --torch a,b,c`` (started, step N, ended),
per run of ``migrate --verify``, per file in migrate, and a plain heartbeat line every 30 s when the output is not
a terminal. Fake clocks: no test waits."""

from __future__ import annotations

import io

from mpsready import progress
from mpsready.run.status import MatrixStatus, StatusLine, write_status


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_matrix_lines_per_release_on_a_terminal(tmp_path):
    clock, out = _Clock(), io.StringIO()
    st = MatrixStatus(out, clock=clock)
    a, b = str(tmp_path / "a.status"), str(tmp_path / "b.status")
    st.started("2.3", a)
    st.started("2.13", b)
    clock.now = 5.0
    write_status(a, {"steps": 2, "ops": 140})
    st.poll()  # before 10 s: nothing yet
    clock.now = 10.0
    st.poll()  # b wrote nothing yet: a terminal gets no line for it
    write_status(a, {"steps": 2, "ops": 140})
    clock.now = 21.0
    st.poll()  # unchanged: no second line on a terminal
    st.ended("2.3")
    assert out.getvalue().splitlines() == ["  torch 2.3: started", "  torch 2.13: started",
                                           "  torch 2.3: step 2, 140 ops judged (10 s)"]


def test_matrix_heartbeat_every_30_s_in_a_pipe_changed_or_not(tmp_path):
    clock, out = _Clock(), io.StringIO()
    st = MatrixStatus(out, heartbeat=True, clock=clock)
    a = str(tmp_path / "a.status")
    st.started("2.3", a)
    clock.now = 29.0
    st.poll()
    clock.now = 30.0
    st.poll()  # the child is still importing torch: a line all the same
    write_status(a, {"steps": 1, "ops": 1})
    clock.now = 60.0
    st.poll()
    clock.now = 90.0
    st.poll()
    assert out.getvalue().splitlines() == ["  torch 2.3: started", "  torch 2.3: step 0, 0 ops judged (30 s)",
                                           "  torch 2.3: step 1, 1 op judged (60 s)",
                                           "  torch 2.3: step 1, 1 op judged (90 s)"]


def test_single_run_heartbeat_in_a_pipe(tmp_path):
    clock, out = _Clock(), io.StringIO()
    path = str(tmp_path / "r.status")
    line = StatusLine(path, out, 30.0, clock=clock, heartbeat=True)
    write_status(path, {"steps": 3, "ops": 12})
    for t in (30.0, 60.0):
        clock.now = t
        line.poll()
    assert out.getvalue().splitlines() == ["mpsready run: 3 optimizer steps, 12 ops judged (30 s)",
                                           "mpsready run: 3 optimizer steps, 12 ops judged (60 s)"]


def test_heartbeat_and_waiting_choose_by_terminal_and_quiet():
    assert progress.heartbeat_wanted(io.StringIO(), quiet=False)
    assert not progress.heartbeat_wanted(io.StringIO(), quiet=True)
    assert not progress.heartbeat_wanted(_Tty(), quiet=False)  # a terminal gets a status line instead
    clock, out = _Clock(), io.StringIO()
    beat = progress.Heartbeat(out, lambda s: f"verify: the original on the CPU (still running, {s:.0f} s)",
                              clock=clock)
    clock.now = 30.0
    beat.beat()
    assert out.getvalue() == "verify: the original on the CPU (still running, 30 s)\n"
    tty = _Tty()
    with progress.waiting(tty, False, "verify: the original on the CPU"):
        pass
    assert "verify: the original on the CPU" in tty.getvalue()  # drawn at once (a transient status line)


def test_migrate_verify_prints_each_run_and_planning_beats_in_a_pipe():
    from mpsready.migrate.progress import HeartbeatPlan, for_cli, run_steps

    clock, out = _Clock(), io.StringIO()
    step = run_steps(False, out, clock=clock)
    with step("the original on the CPU"):
        clock.now = 12.4
    assert out.getvalue().splitlines() == ["verify: the original on the CPU ...",
                                           "verify: the original on the CPU: done (12 s)"]
    quiet = io.StringIO()
    with run_steps(True, quiet)("x"):
        pass
    assert quiet.getvalue() == ""
    plan = HeartbeatPlan(out := io.StringIO(), clock=clock)
    plan.plan(120, 2000)
    clock.now = 42.4
    plan.beat.beat()
    assert out.getvalue() == "migrate: planning edits, 120 of 2,000 files (30 s)\n"
    made = for_cli(False, io.StringIO())
    assert isinstance(made, HeartbeatPlan)
    made.stop()
    assert for_cli(True, io.StringIO()) is None

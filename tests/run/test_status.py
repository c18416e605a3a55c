"""mpsready run's status line: the child's counts file, the parent's lines (a fake clock), on/off."""

import io
import json
import types

from mpsready.run import status


def _emu(steps, calls):
    return types.SimpleNamespace(steps=steps, records={i: types.SimpleNamespace(calls=c) for i, c in enumerate(calls)})


def test_counts_and_the_file_round_trip(tmp_path):
    path = str(tmp_path / "result.json.status")
    assert status.counts(_emu(3, [10, 5])) == {"steps": 3, "ops": 15}
    assert status.read_status(path) is None
    status.write_status(path, {"steps": 3, "ops": 15})
    assert status.read_status(path) == {"steps": 3, "ops": 15}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json.status"]
    (tmp_path / "result.json.status").write_text('{"steps": "x", "ops": 1}')
    assert status.read_status(path) is None


def test_status_text():
    assert status.status_text({"steps": 1, "ops": 1}, 2.4) == "mpsready run: 1 optimizer step, 1 op judged (2 s)"
    assert (status.status_text({"steps": 12, "ops": 34102}, 45.0)
            == "mpsready run: 12 optimizer steps, 34,102 ops judged (45 s)")


def test_lines_when_the_counts_change_at_most_every_period(tmp_path):
    path = str(tmp_path / "s")
    now = [100.0]
    err = io.StringIO()
    line = status.StatusLine(path, err, 10.0, clock=lambda: now[0])
    now[0] = 105.0
    status.write_status(path, {"steps": 1, "ops": 7})
    line.poll()  # too early
    now[0] = 110.0
    line.poll()
    now[0] = 125.0
    line.poll()  # unchanged: no line
    status.write_status(path, {"steps": 2, "ops": 14})
    now[0] = 126.0
    line.poll()
    assert err.getvalue() == ("mpsready run: 1 optimizer step, 7 ops judged (10 s)\n"
                              "mpsready run: 2 optimizer steps, 14 ops judged (26 s)\n")


def test_writer_thread_writes_and_stops(tmp_path):
    path = str(tmp_path / "s")
    writer = status.StatusWriter(path, _emu(2, [4]), every_s=0.01)
    writer.start()
    writer.stop()
    writer.write()
    assert json.loads(open(path).read()) == {"steps": 2, "ops": 4}


def test_no_status_line_off_a_terminal_or_with_quiet(monkeypatch):
    from mpsready.run import cli

    class TTY(io.StringIO):
        def isatty(self):
            return True

    spec = {"out": "x"}
    monkeypatch.setattr("sys.stderr", io.StringIO())
    # off a terminal (issue 38): a heartbeat line every 30 s instead of nothing; -q still silences it
    assert cli._status_line(spec, "/nonexistent/result.json", True) is None and spec == {"out": "x"}
    beat = cli._status_line(spec, "/nonexistent/result.json", False)
    beat.stop()
    assert (beat.heartbeat, beat.print_every_s) == (True, 30.0)
    spec = {"out": "x"}
    monkeypatch.setattr("sys.stderr", TTY())
    assert cli._status_line(spec, "/nonexistent/result.json", True) is None and spec == {"out": "x"}
    line = cli._status_line(spec, "/nonexistent/result.json", False)
    line.stop()
    assert spec == {"out": "x", "status": "/nonexistent/result.json.status"}

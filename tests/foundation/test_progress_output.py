"""The stderr progress helper (on a terminal only, never with -q, never on stdout) and the output module."""

import io
import json

import pytest

from mpsready import output, progress
from mpsready.errors import UsageError

HIDE, SHOW, ERASE = "\x1b[?25l", "\x1b[?25h", "\r\x1b[2K"


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


class FakePipe(io.StringIO):
    def isatty(self):
        return False


@pytest.mark.parametrize("stream, quiet, on", [(FakeTTY(), False, True), (FakeTTY(), True, False),
                                               (FakePipe(), False, False), (None, False, False)])
def test_enabled_only_on_a_terminal_without_quiet(stream, quiet, on):
    assert progress.enabled(stream, quiet) is on


def test_enabled_follows_a_rich_console():
    from rich.console import Console

    assert progress.enabled(Console(file=FakeTTY()), False) is True
    assert progress.enabled(Console(file=FakeTTY(), quiet=True), False) is False
    assert progress.enabled(Console(file=FakePipe()), False) is False


@pytest.mark.parametrize("stream, quiet", [(FakePipe(), False), (FakeTTY(), True)])
def test_off_writes_nothing(stream, quiet):
    with progress.progress(stream, quiet, 10, "scan") as bar:
        bar.update(5, total=10, description="x", reset=True)
        assert (bar.live, bar.drawn) == (False, False)
    assert stream.getvalue() == ""


def test_min_total_keeps_a_small_job_silent():
    stream = FakeTTY()
    with progress.progress(stream, False, None, "analysing Python files", min_total=200) as bar:
        assert bar.live is True
        bar.update(50, total=199)
        bar.update(199, total=199)
        assert bar.drawn is False
    assert stream.getvalue() == ""


def test_bar_on_a_terminal_is_transient():
    stream = FakeTTY()
    with progress.progress(stream, False, None, "analysing Python files", min_total=2) as bar:
        bar.update(1, total=2)
        assert bar.drawn is True
    text = stream.getvalue()
    assert text.startswith(HIDE + ERASE + "analysing Python files ")
    assert "1/2" in text
    assert text.endswith(SHOW + "\r\x1b[1A\x1b[2K")  # erased at the end: only the command's own lines stay


def test_status_line_shows_the_phase():
    stream = FakeTTY()
    with progress.progress(stream, False, None, "starting") as bar:
        bar.update(description="trace running ...", reset=True)
    text = stream.getvalue()
    assert "starting" in text and "trace running ..." in text and "0:00:00" in text


def test_scan_json_stdout_untouched_by_the_bar(tmp_path, monkeypatch, capsys):
    from mpsready.cli import main
    from mpsready.scan import cli as scan_cli

    for i in range(3):
        (tmp_path / f"m{i}.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    monkeypatch.setattr(scan_cli, "PROGRESS_MIN_FILES", 1)
    tty = FakeTTY()
    monkeypatch.setattr("sys.stderr", tty)
    assert main(["scan", "--no-cache", "--format", "json", "--exit-zero", "-j", "1", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)  # one JSON document, nothing else
    assert doc["schema"]["name"] == "mpsready.scan"
    assert "analysing Python files" in tty.getvalue() and "3/3" in tty.getvalue()
    tty.truncate(0)
    tty.seek(0)
    assert main(["-q", "scan", "--no-cache", "--format", "json", "--exit-zero", "-j", "1", str(tmp_path)]) == 0
    assert tty.getvalue() == ""


def test_emit_to_stdout_and_to_a_file(tmp_path, capsys):
    output.emit("hello\n", None)
    assert capsys.readouterr().out == "hello\n"
    target = tmp_path / "o.txt"
    output.emit("a\n", str(target))
    output.emit("b\n", str(target), atomic=True)
    assert target.read_text() == "b\n" and sorted(p.name for p in tmp_path.iterdir()) == ["o.txt"]


def test_emit_error_texts(tmp_path):
    missing = str(tmp_path / "no" / "o.txt")
    with pytest.raises(UsageError) as exc:
        output.emit("x", missing)
    assert str(exc.value) == f"cannot write {missing}: No such file or directory"
    with pytest.raises(UsageError) as exc:
        output.emit("x", missing, error=output.cannot_write_verbatim)
    assert str(exc.value) == f"cannot write {missing}: [Errno 2] No such file or directory: '{missing}'"
    with pytest.raises(UsageError) as exc:
        output.emit("x", missing, error=output.option_cannot_write("--output"))
    assert str(exc.value) == f"--output {missing}: cannot write: No such file or directory"


def test_console_for_a_file_is_wide_and_plain(tmp_path):
    target = tmp_path / "t.txt"
    with output.console_for(str(target)) as console:
        console.print("[bold]x[/] " + "y" * 150)
    assert target.read_text() == "x " + "y" * 150 + "\n"
    with pytest.raises(UsageError) as exc:
        with output.console_for(str(tmp_path / "no" / "t.txt"), error=output.option_cannot_write("--output")):
            pass
    assert str(exc.value).endswith(": cannot write: No such file or directory")


def test_console_for_a_pipe_takes_the_pipe_width(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("sys.stdout", FakePipe())
    assert output.stdout_console(140).width == 140
    monkeypatch.setenv("COLUMNS", "90")
    assert output.stdout_console(140).width == 90


def test_after_s_draws_nothing_until_that_many_seconds_have_passed():
    now = [0.0]
    bar = progress.bar_on(FakeTTY(), 10, "planning", after_s=1.0, clock=lambda: now[0])
    now[0] = 0.9
    bar.update(3)
    assert (bar.drawn, bar.completed) == (False, 3)  # counted, not drawn
    now[0] = 1.0
    bar.update(4)
    assert bar.drawn and bar.bar.tasks[0].completed == 4
    bar.stop()
    assert "planning" in bar.console.file.getvalue()

"""The progress bar of planning and applying: on a terminal only, never with -q, never on stdout."""

import io

from mpsready.cli import main
from mpsready.migrate import progress as prog
from mpsready.migrate.apply import apply_plan
from mpsready.migrate.engine import migrate_path

GOOD = "import torch\nx = torch.zeros(2).cuda()\n"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_bar_only_on_a_terminal_and_never_with_quiet():
    assert prog.shown(False, _Tty()) is True
    assert prog.shown(True, _Tty()) is False
    assert prog.shown(False, io.StringIO()) is False
    for quiet, stream in ((True, _Tty()), (False, io.StringIO())):
        with prog.progress(3, "writing files", quiet, stream=stream, clock=_Clock(5.0)) as advance:
            assert advance.bar.live is False
            advance()
            advance.to(3, 3)
        assert stream.getvalue() == ""


def test_the_bar_counts_and_is_drawn_after_a_second():
    quick = _Tty()
    with prog.progress(2, "writing files", False, stream=quick, clock=_Clock(0.01)) as advance:
        advance()
        advance()
    assert quick.getvalue() == "" and advance.done == 2  # a short job finishes silently
    slow = _Tty()
    with prog.progress(2, "writing files", False, stream=slow, clock=_Clock(0.6)) as advance:
        advance()
        advance()
    assert "writing files" in slow.getvalue() and "2/2" in slow.getvalue()


def test_apply_reports_each_file(tmp_path):
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(GOOD)
    plan = migrate_path(tmp_path)
    calls = []
    result = apply_plan(plan, on_file=lambda: calls.append(1))
    assert (len(calls), sorted(result.written)) == (3, ["m0.py", "m1.py", "m2.py"])


def test_the_cli_writes_no_bar_when_stderr_is_not_a_terminal(tmp_path, capsys):
    (tmp_path / "m.py").write_text(GOOD)
    assert main(["migrate", str(tmp_path), "--apply", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("{") and "writing files" not in out + err

"""``mpsready record`` with an --out that cannot be created: exit 2 before the step runs, not a traceback."""

import pytest

pytest.importorskip("torch")

from mpsready.cli import main  # noqa: E402


def test_out_under_a_file(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = blocker / "run"
    assert main(["record", "tests.record.entries:small_cnn", "--device", "cpu", "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"mpsready record: error: cannot create run record {out}: Not a directory\n"
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("extra, message", [
    # each used to start the worker and come back as a "crash" of the user's build stage (ENV203, exit 1)
    (["--timeout", "-1"], "--timeout must be a positive number of seconds; got -1.0"),
    (["--timeout", "0"], "--timeout must be a positive number of seconds; got 0.0"),
    (["--seed", "-1"], "--seed must be between 0 and 4294967295; got -1"),
    (["--seed", "99999999999999999999999"], "--seed must be between 0 and 4294967295; got 99999999999999999999999"),
    # `mpsready env --project` refuses a missing directory; record used to write a git error into the env record
    (["--project", "/nonexistent-project"], "project directory not found: /nonexistent-project"),
])
def test_options_that_would_fail_in_the_worker(tmp_path, capsys, extra, message):
    out = tmp_path / "run"
    assert main(["record", "tests.record.entries:small_cnn", "--device", "cpu", "--out", str(out), *extra]) == 2
    assert capsys.readouterr().err == f"mpsready record: error: {message}\n"
    assert not out.exists()


def test_out_with_a_missing_parent_is_refused_and_nothing_is_made(tmp_path, capsys):
    # h40c: the rule of every -o: only the last level is created (it made /nonexist/a/ whole)
    out = tmp_path / "nonexist" / "a" / "run"
    assert main(["record", "tests.record.entries:small_cnn", "--device", "cpu", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"mpsready record: error: cannot create run record {out}: the folder "
                                       f"{out.parent} does not exist (only the last level is created)\n")
    assert not (tmp_path / "nonexist").exists()

"""``mpsready ops`` on odd tables and options: exit 2 and one line, never a traceback."""

import pytest

from mpsready.cli import main


@pytest.mark.parametrize("text, why", [
    ("[1, 2]", "not an ops table (a JSON list, not an object)"),  # used to raise AttributeError
    ("[" * 100_000, "JSON nested too deeply to read"),  # used to raise RecursionError
])
def test_table_that_is_not_an_object(tmp_path, capsys, text, why):
    t = tmp_path / "table.json"
    t.write_text(text)
    assert main(["ops", "--table", str(t), "add"]) == 2
    assert capsys.readouterr().err == f"mpsready ops: error: cannot read table {t}: {why}\n"


def test_output_without_dump_installed_is_refused(tmp_path, capsys):
    out = tmp_path / "ops.txt"
    assert main(["ops", "add", "--output", str(out)]) == 2  # used to print to stdout, exit 0, and write nothing
    assert capsys.readouterr().err == ("mpsready ops: error: --output only applies to --dump-installed; "
                                       "redirect stdout to save a lookup\n")
    assert not out.exists()

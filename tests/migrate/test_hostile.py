"""Hostile or large input (issue 19 item 6): migrate is total. Each case asserts the exact outcome."""

from pathlib import Path

from mpsready.cli import main
from mpsready.migrate.engine import migrate_path
from mpsready.migrate.guard import LIMIT, nesting

GOOD = "import torch\nx = torch.ones(1).cuda()\n"


def _tree(tmp_path: Path, bad: str) -> Path:
    (tmp_path / "a.py").write_text(GOOD + bad)
    (tmp_path / "b.py").write_text(GOOD)
    return tmp_path


def test_5000_nested_brackets_are_listed_not_parsed_and_the_tree_still_migrates(tmp_path, capsys):
    root = _tree(tmp_path, "y = " + "[" * 5000 + "]" * 5000 + "\n")  # segfaulted libcst's native parser (exit 139)
    plan = migrate_path(root)
    assert plan.errors == ["a.py: nested too deeply to parse safely (estimate 25000 at line 3, limit 1000)"]
    assert [fp.path for fp in plan.files] == ["b.py"]
    assert main(["migrate", str(root)]) == 0
    err = capsys.readouterr().err
    assert "  not parsed: a.py: nested too deeply to parse safely (estimate 25000 at line 3, limit 1000)\n" in err


def test_500_levels_in_single_file_mode_exit_0(tmp_path, capsys):
    root = _tree(tmp_path, "y = " + "(" * 500 + ")" * 500 + "\n")  # RecursionError, exit 3, before
    assert main(["migrate", str(root / "a.py")]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "  not parsed: a.py: nested too deeply to parse safely (estimate 2500 at line 3, limit 1000)\n" in err


def test_below_the_estimate_limit_a_recursion_error_of_libcst_is_a_listed_file(tmp_path):
    root = _tree(tmp_path, "y = " + "[" * 150 + "]" * 150 + "\n")  # estimate 750: parsed, libcst's Python half recurses
    plan = migrate_path(root)
    assert plan.errors == ["a.py: nested too deeply for libcst (RecursionError); left as it is"]
    assert [fp.path for fp in plan.files] == ["b.py"]


def test_long_chains_are_refused_before_the_native_parser(tmp_path):
    root = _tree(tmp_path, "y = " + " or ".join(["a"] * 20000) + "\n")  # 10,000+ links segfaulted the parser
    assert migrate_path(root).errors == ["a.py: nested too deeply to parse safely (estimate 40001 at line 3, limit 1000)"]


def test_the_estimate_counts_siblings_apart_so_long_flat_literals_pass():
    assert nesting("y = [" + ", ".join(['"a"'] * 50000) + "]\n") == (6, 1)
    assert nesting("y = a + b\n") == (5, 1)
    assert nesting('y = ("a" "b" "c")\n') == (8, 1)
    chain = "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(600))
    assert nesting(chain)[0] == 2 * 600 + 4 > LIMIT
    assert nesting("") == (0, 0)
    assert nesting("x = (\n") == (5, 1)  # an unterminated bracket ends the estimate, libcst reports the error


def test_a_flat_list_of_10000_items_still_migrates(tmp_path):
    (tmp_path / "a.py").write_text(GOOD + "y = [" + ", ".join(["1"] * 10000) + "]\n")
    plan = migrate_path(tmp_path)
    assert plan.errors == [] and plan.edits == 1

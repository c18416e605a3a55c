"""``mpsready env --diff`` on inputs that are not env records: exit 2 and one line, never a traceback."""

from mpsready.cli import main


def test_diff_of_json_nested_too_deeply(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    assert main(["env", "--diff", str(deep), str(deep)]) == 2  # used to raise RecursionError
    err = capsys.readouterr().err
    assert err == (f"mpsready env: error: cannot read env record {deep}: maximum recursion depth exceeded while "
                   "decoding a JSON array from a unicode string\n")


def test_diff_of_a_binary_file(tmp_path, capsys):
    b = tmp_path / "b.json"
    b.write_bytes(b"\xff\xfe\x00")
    assert main(["env", "--diff", str(b), str(b)]) == 2
    assert capsys.readouterr().err.startswith(f"mpsready env: error: cannot read env record {b}: 'utf-8' codec")

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


def test_env_diff_of_a_named_pipe_is_a_usage_error_not_a_hang(tmp_path, capsys):
    # issue 34 round 5: read_text() of a FIFO waited for a writer for ever
    import os

    from mpsready.cli import main

    os.mkfifo(tmp_path / "a.json")
    (tmp_path / "b.json").write_text("{}")
    assert main(["env", "--diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    assert capsys.readouterr().err == (f"mpsready env: error: cannot read env record {tmp_path / 'a.json'}: "
                                       f"{tmp_path / 'a.json'} is a named pipe, not a regular file\n")


def test_env_diff_of_a_number_past_pythons_digit_limit_is_a_usage_error(tmp_path, capsys):
    # int('9' * 5000) raises a plain ValueError json did not turn into JSONDecodeError: exit 3, "a bug"
    from mpsready.cli import main

    (tmp_path / "a.json").write_text('{"schema": {"name": "mpsready.env", "version": 1}, "python": {"version": '
                                     + "9" * 5000 + "}}")
    assert main(["env", "--diff", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 2
    assert capsys.readouterr().err == (f"mpsready env: error: cannot read env record {tmp_path / 'a.json'}: an integer "
                                       "of 5000 digits is out of range\n")

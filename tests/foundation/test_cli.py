from mpsready.cli import main


def test_no_command_is_usage_error(capsys):
    assert main([]) == 2


def test_unknown_option_is_usage_error(capsys):
    assert main(["--bogus"]) == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("mpsready 0.")

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


@pytest.mark.parametrize("name", ["zzz::??", "aten::", "::add", "\x1b[2Jadd", "add.", "aten::add..x"])
def test_malformed_operator_names_are_usage_errors(capsys, name):
    assert main(["ops", name]) == 2  # used to answer "unknown (absent)" with exit 0
    assert capsys.readouterr().err == (f"mpsready ops: error: {name!r} is not an operator name such as "
                                       "aten::add.Tensor, add.Tensor or relu\n")


def test_every_shipped_operator_passes_the_name_check():
    from mpsready.ops import api

    names = {k for v in api.shipped_versions() for k in api.load_db(v)._ops}
    assert len(names) > 3000
    for k in names:
        api.check_op_name(k if "::" in k else f"aten::{k}")


@pytest.mark.parametrize("name", ["aten::add.Tensor", "add.Tensor", "relu", "aten.relu.default", "mylib::my_op"])
def test_well_formed_names_are_answered(name):
    assert main(["ops", name, "--format", "json"]) == 0


def test_ops_table_that_is_a_named_pipe_is_a_usage_error_not_a_hang(tmp_path, capsys):
    # issue 34 round 5: open() of a FIFO waited for a writer for ever
    import os

    from mpsready.cli import main

    os.mkfifo(tmp_path / "t.json")
    assert main(["ops", "--table", str(tmp_path / "t.json"), "aten::add.Tensor"]) == 2
    assert capsys.readouterr().err == (f"mpsready ops: error: cannot read table {tmp_path / 't.json'}: "
                                       f"{tmp_path / 't.json'} is a named pipe, not a regular file\n")


def test_ops_table_gzip_that_unpacks_past_the_limit_is_refused(tmp_path, capsys, monkeypatch):
    import gzip

    from mpsready.cli import main
    from mpsready.ops import api

    monkeypatch.setattr(api, "MAX_TABLE_BYTES", 1000)
    (tmp_path / "t.json.gz").write_bytes(gzip.compress(b" " * 5000))  # used to be unpacked whole: a gzip bomb
    assert main(["ops", "--table", str(tmp_path / "t.json.gz"), "aten::add.Tensor"]) == 2
    assert capsys.readouterr().err.endswith("unpacks to more than 1000 bytes\n")


@pytest.mark.parametrize("name, hint", [
    ("aten::nosuch_op_h40", "no similar name"),
    ("aten::rellu", "closest: aten::relu, aten::rrelu, aten::relu_"),
])
def test_aten_name_no_release_has_is_a_usage_error(capsys, name, hint):
    # h40c: exit 0 with "unknown (absent)" and the global dtype and macOS rules listed as if they applied
    assert main(["ops", name, "--torch", "2.14"]) == 2
    assert capsys.readouterr().err == (f"mpsready ops: error: aten::{name.removeprefix('aten::')} is not an operator "
                                       "of PyTorch 2.2.2 to 2.14.1 (not in native_functions.yaml of any shipped "
                                       f"release); {hint}\n")


def test_a_bare_operator_name_asks_for_an_overload_without_denying_the_operator(capsys):
    # `ops add` said "aten::add is not an operator of PyTorch 2.2.2 to 2.14.1": it is one, named without its overload
    assert main(["ops", "add", "--torch", "2.14"]) == 2
    assert capsys.readouterr().err == ("mpsready ops: error: aten::add names 4 overloads and the tables answer for "
                                       "one of them; give an overload: aten::add.Scalar, aten::add.Scalar_out, "
                                       "aten::add.Tensor, aten::add.out\n")


@pytest.mark.parametrize("name", ["cholesky", "torchvision::nms"])  # removed in 2.14; another namespace
def test_removed_or_foreign_ops_are_still_answered_unknown(capsys, name):
    import json

    assert main(["ops", name, "--torch", "2.14", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["status"] == "unknown"


@pytest.mark.parametrize("name, hint", [
    ("torch.linalg.eig", "; its aten operator is probably aten::linalg_eig"),
    ("torch.nn.functional.conv2d", "; its aten operator is probably aten::conv2d"),
    ("torch.nosuch_h40e", ""),
])
def test_a_python_name_is_a_usage_error_with_its_aten_name(capsys, name, hint):
    # h40e: `ops torch.linalg.eig` read `torch` as a namespace and answered "unknown (absent)" with exit 0
    assert main(["ops", name, "--torch", "2.5"]) == 2
    assert capsys.readouterr().err == (f"mpsready ops: error: {name!r} is a Python name, not an operator name such as "
                                       f"aten::add.Tensor, add.Tensor or relu{hint}\n")

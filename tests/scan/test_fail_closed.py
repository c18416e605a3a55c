"""Fail closed on unread input (issue 34 item 5): a declaration that does not parse, or a project whose own
configuration hides all its code, used to give ``runs_on_mac`` and exit 0 with no word of what was not read."""

import json

import pytest

from mpsready.cli import main

CUDA = "import torch\nx = torch.ones(1).cuda()\n"
BROKEN = '[project]\nname = "x"\ndependencies = ["flash-attn", "torch"\n'


def _scan_json(root, capsys, *extra):
    code = main(["scan", str(root), "--no-cache", "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)["outlook"]


def test_a_pyproject_that_does_not_parse_is_incomplete_and_exits_1(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(BROKEN)
    (tmp_path / "train.py").write_text("import torch\nx = torch.ones(1)\n")
    code, outlook = _scan_json(tmp_path, capsys)
    assert code == 1
    assert (outlook["verdict"], outlook["complete"], outlook["incomplete"]) == ("runs_on_mac", False, ["pyproject.toml"])
    assert main(["scan", str(tmp_path), "--no-cache"]) == 1
    assert capsys.readouterr().out.rstrip().endswith(
        "exit 1: the outlook rests on a partial read (not read: pyproject.toml); fail closed: fix or include them "
        "and scan again")
    assert main(["scan", str(tmp_path), "--no-cache", "--exit-zero"]) == 0


@pytest.mark.parametrize("files, shown", [
    ({".gitignore": "*\n"}, ["train.py (excluded by .gitignore)"]),
    ({"pyproject.toml": '[tool.mpsready]\nexclude = ["**"]\n'},
     ["pyproject.toml (excluded by exclude)", "train.py (excluded by exclude)"]),
    ({"pyproject.toml": "[tool.mpsready]\nmax-file-size = 1\n"}, ["train.py", "pyproject.toml"]),
])
def test_a_project_config_that_hides_all_code_is_not_a_clean_verdict(tmp_path, capsys, files, shown):
    (tmp_path / "train.py").write_text(CUDA)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, outlook = _scan_json(tmp_path, capsys)
    assert code == 1
    assert (outlook["complete"], outlook["incomplete"]) == (False, shown)


def test_ignoring_build_output_beside_real_code_stays_complete(tmp_path, capsys):
    (tmp_path / "train.py").write_text("import torch\nx = torch.ones(1)\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text(CUDA)
    code, outlook = _scan_json(tmp_path, capsys)
    assert (code, outlook["verdict"], outlook["complete"]) == (0, "runs_on_mac", True)

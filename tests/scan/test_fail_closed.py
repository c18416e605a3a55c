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
    # the verdict says exactly what it did not read (issue 34 item 5)
    assert outlook["excluded"] == ["build (excluded by .gitignore)"]


@pytest.mark.parametrize("table", ['exclude = ["**"]', 'exclude = ["train.py"]', 'exclude = ["*.py"]',
                                   'select = ["INP"]', 'ignore = ["API", "DEP"]',
                                   'per-file-ignores = {"*" = ["API", "DEP"]}'])
def test_the_projects_own_select_ignore_exclude_narrow_the_report_not_the_outlook(tmp_path, capsys, table):
    # issue 34 item 5: they used to narrow what was read, so the CUDA file beside a clean one gave runs_on_mac
    (tmp_path / "train.py").write_text(CUDA)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\ndependencies = ["torch"]\n[tool.mpsready]\n{table}\n')
    code = main(["scan", str(tmp_path), "--no-cache", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert (doc["outlook"]["verdict"], doc["outlook"]["complete"]) == ("mac_for_dev", True)
    assert [f["code"] for f in doc["outlook"]["limiting"]] == ["API101"]
    assert [f["code"] for f in doc["findings"] if f["location"]["path"] == "train.py"] == []
    assert code == 1  # the report is the project's to narrow, not the gate on the outlook (exclude ["**"]: exit 0)
    assert main(["scan", str(tmp_path), "--no-cache", "--format", "concise"]) == 1
    out = capsys.readouterr().out
    assert ("1 finding(s) not reported by per-file-ignores / ignore-scopes / the project's select, ignore, exclude "
            "(the outlook still counts them)") in out
    assert out.rstrip().endswith(
        "exit 1: 1 main-path finding at or above blocker that the project's [tool.mpsready] select, ignore, "
        "exclude or per-file-ignores left out of the report set the outlook mac_for_dev: the project's "
        "configuration narrows the report, never the gate (pass --exit-zero to exit 0)")
    assert main(["scan", str(tmp_path), "--no-cache", "--exit-zero", "-q"]) == 0


def test_the_users_own_exclude_on_the_command_line_still_narrows_what_is_read(tmp_path, capsys):
    (tmp_path / "train.py").write_text(CUDA)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "requirements.txt").write_text("torch\n")
    code, outlook = _scan_json(tmp_path, capsys, "--exclude", "train.py")
    assert (code, outlook["verdict"], outlook["complete"]) == (0, "runs_on_mac", True)


def _git(root, *args):
    import subprocess

    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.mark.parametrize("ignore", ["*\n!.gitignore\n!a.py\n!requirements.txt\n", "train.py\n", "src/\n"])
def test_a_gitignore_never_hides_a_file_the_git_index_tracks(tmp_path, capsys, ignore):
    # git applies .gitignore to untracked files only; a force-added train.py used to be skipped: runs_on_mac
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git makes the test's repository")
    (tmp_path / "src").mkdir()
    rel = "src/train.py" if ignore == "src/\n" else "train.py"
    (tmp_path / rel).write_text(CUDA)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "requirements.txt").write_text("torch\n")
    (tmp_path / ".gitignore").write_text(ignore)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-f", ".")
    (tmp_path / "untracked.py").write_text(CUDA) if ignore.startswith("*") else None
    code, outlook = _scan_json(tmp_path, capsys)
    assert (code, outlook["verdict"], [f["path"] for f in outlook["limiting"]]) == \
        (1, "mac_for_dev", [rel])
    # the scan of a subfolder reads the index of the repository above it
    if rel == "src/train.py":
        code, outlook = _scan_json(tmp_path / "src", capsys)
        assert (code, outlook["verdict"]) == (1, "mac_for_dev")

"""`mpsready scan` on the command line: exit codes, --fail-on, --select/--ignore, --output, config."""

import json

from mpsready.cli import main
from tests.scan.conftest import FIXTURES


def run(capsys, *args):
    code = main(["scan", *args, "--no-cache"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_exit_codes_follow_fail_on(capsys, write_project):
    root = write_project({"a.py": "import torch\ntorch.backends.cudnn.benchmark = True\n"})  # one info finding
    assert run(capsys, str(root))[0] == 0  # default --fail-on blocker
    assert run(capsys, str(root), "--fail-on", "info")[0] == 1
    assert run(capsys, str(FIXTURES / "code"))[0] == 1


def test_missing_path_exits_2_with_a_clear_message(capsys, tmp_path):
    code, out, err = run(capsys, str(tmp_path / "nope"))
    assert code == 2
    assert err.strip() == f"mpsready scan: error: {tmp_path / 'nope'}: no such file or directory"


def test_bad_option_exits_2(capsys):
    assert run(capsys, str(FIXTURES / "code"), "--fail-on", "sometimes")[0] == 2
    assert run(capsys, str(FIXTURES / "code"), "--max-file-size", "0")[0] == 2


def test_select_and_ignore_codes_and_prefixes(capsys):
    code, out, _ = run(capsys, str(FIXTURES / "code"), "--format", "json", "--select", "API1,DTY", "--ignore", "API101,API103")
    codes = sorted({f["code"] for f in json.loads(out)["findings"]})
    assert codes == ["DTY101", "DTY102", "DTY103", "DTY104"]  # 'API1' is not an alphabetic prefix: it selects nothing
    code, out, _ = run(capsys, str(FIXTURES / "code"), "--format", "json", "--select", "API", "--ignore", "API1")
    assert all(f["code"].startswith("API") for f in json.loads(out)["findings"])


def test_output_file_and_formats(capsys, tmp_path):
    target = tmp_path / "out.sarif"
    code, out, _ = run(capsys, str(FIXTURES / "kernels"), "--format", "sarif", "--output", str(target))
    assert code == 1 and out == ""
    assert json.loads(target.read_text())["version"] == "2.1.0"
    code, out, _ = run(capsys, str(FIXTURES / "kernels"), "--format", "md")
    assert out.startswith("# mpsready scan: ")


def test_project_config_and_cli_override(capsys, write_project):
    root = write_project({
        "pyproject.toml": '[project]\nname = "x"\n\n[tool.mpsready]\nfail-on = "info"\nignore = ["API105"]\n'
                          'exclude = ["legacy/*"]\nmax-file-size = 100000\nbogus = 1\n',
        "a.py": "import torch\ntorch.backends.cudnn.benchmark = True\ntorch.compile(torch.nn.Linear(1, 1))\n",
        "legacy/old.py": "import torch\ntorch.ones(1).cuda()\n",
    })
    code, out, _ = run(capsys, str(root), "--format", "json")
    doc = json.loads(out)
    assert [(f["code"], f["location"].get("path"), f["location"].get("line")) for f in doc["findings"]] == [
        ("DEP110", ".", None), ("API114", "a.py", 3), ("INP111", "pyproject.toml", None)]  # [project] lists none
    assert code == 1  # fail-on = "info" from the project
    assert run(capsys, str(root), "--fail-on", "blocker")[0] == 0  # the command line wins
    assert run(capsys, str(root), "--no-config")[0] == 1  # legacy/old.py's .cuda() is a blocker


def test_rules_listing_includes_scan_rules(capsys):
    assert main(["rules", "--format", "json", "EXT"]) == 0
    codes = [r["code"] for r in json.loads(capsys.readouterr().out)]
    assert codes == ["EXT101", "EXT102", "EXT103", "EXT104", "EXT105", "EXT106", "EXT107", "EXT108",
                     "EXT109"]


def test_scan_never_imports_torch():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, io, contextlib\nfrom mpsready.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['scan', {str(FIXTURES / 'code')!r}, '--no-cache', '--format', 'json'])\n"
            "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))\n")
    src = Path(__file__).resolve().parents[2] / "src"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(src)}).stdout
    assert out.strip() == "[]"

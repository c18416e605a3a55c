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
    code, out, _ = run(capsys, str(FIXTURES / "code"), "--format", "json", "--select", "DTY", "--ignore", "API101,API103")
    codes = sorted({f["code"] for f in json.loads(out)["findings"]})
    assert codes == ["DTY101", "DTY102", "DTY103", "DTY104"]
    code, out, _ = run(capsys, str(FIXTURES / "code"), "--format", "json", "--select", "API", "--ignore", "API101")
    assert sorted({f["code"] for f in json.loads(out)["findings"]}) == [
        "API102", "API103", "API104", "API105", "API106", "API107", "API108", "API110", "API111", "API112", "API113",
        "API114", "API115"]


PREFIX_LIST = "DEP, EXT, API, DTY, OPS, NUM, PRF, ENV, INP"


def test_unknown_codes_and_prefixes_fail_closed_with_exit_2(capsys):
    # the gate used to fail open: --select FOO exited 0 ("runs on Mac"), --ignore API10 was ignored silently
    for flag, value in (("--select", "FOO"), ("--ignore", "API10"), ("--select", "API1,DTY"), ("--ignore", "api999")):
        code, out, err = run(capsys, str(FIXTURES / "code"), "--format", "json", flag, value)
        bad = {"API1,DTY": "API1", "api999": "API999"}.get(value, value)
        assert (code, out) == (2, "")
        assert err == (f"mpsready scan: error: {flag}: unknown rule code or prefix {bad!r}; give a code such as "
                       f"API101 or a prefix ({PREFIX_LIST}); `mpsready rules` lists them\n")


def test_unknown_code_in_project_config_is_a_usage_error(capsys, write_project):
    root = write_project({"pyproject.toml": '[project]\nname = "x"\n\n[tool.mpsready]\nignore = ["API10"]\n',
                          "a.py": "import torch\ntorch.ones(1).cuda()\n"})
    code, out, err = run(capsys, str(root), "--format", "json")
    assert (code, out) == (2, "")
    assert err == (f"mpsready scan: error: {root / 'pyproject.toml'} [tool.mpsready] ignore: unknown rule code or "
                   f"prefix 'API10'; give a code such as API101 or a prefix ({PREFIX_LIST}); `mpsready rules` lists "
                   "them\n")
    # --no-config skips the table, and with it the error
    assert run(capsys, str(root), "--no-config")[0] == 1


def test_exit_zero_and_worst_exit_code_over_many_paths(capsys, write_project, tmp_path):
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "requirements.txt").write_text("numpy\n")
    assert run(capsys, str(clean))[0] == 0
    assert run(capsys, str(clean), str(FIXTURES / "code"))[0] == 1  # the worst of the paths
    assert run(capsys, str(FIXTURES / "code"), "--exit-zero")[0] == 0
    code, _, err = run(capsys, str(FIXTURES / "code"), "--exit-zero", "--select", "FOO")
    assert code == 2  # --exit-zero never hides a usage error
    code, out, err = run(capsys, str(clean), str(tmp_path / "nope"))
    assert (code, out) == (2, "")  # every path is checked before any is scanned


def test_many_paths_json_lines_one_document_per_path(capsys, tmp_path):
    code, out, _ = run(capsys, str(FIXTURES / "code"), str(FIXTURES / "kernels"), str(FIXTURES / "deps_req"),
                       "--format", "json")
    docs = [json.loads(line) for line in out.splitlines()]
    assert [d["root"] for d in docs] == [str(FIXTURES / n) for n in ("code", "kernels", "deps_req")]
    assert [d["outlook"]["verdict"] for d in docs] == ["mac_for_dev", "stay_on_cuda", "mac_for_dev"]
    assert code == 1
    target = tmp_path / "many.sarif"
    run(capsys, str(FIXTURES / "code"), str(FIXTURES / "kernels"), "--format", "sarif", "-o", str(target))
    runs = json.loads(target.read_text())["runs"]
    assert [r["automationDetails"]["id"] for r in runs] == ["mpsready/tests/scan/fixtures/code/",
                                                             "mpsready/tests/scan/fixtures/kernels/"]


def test_quiet_and_verbose(capsys):
    code, out, err = run(capsys, str(FIXTURES / "code"), "--format", "json", "-q")
    assert err == "" and json.loads(out)["outlook"]["verdict"] == "mac_for_dev"
    code, out, err = run(capsys, str(FIXTURES / "code"), "--format", "json", "-v")
    assert err.startswith(f"mpsready scan {FIXTURES / 'code'}: ") and err.endswith(" s; 0 from the cache; 1 suppressed\n")
    assert main(["-v", "scan", str(FIXTURES / "code"), "--no-cache", "--format", "json"]) == 1  # before the command
    assert "files," in capsys.readouterr().err


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


def test_many_paths_terminal_and_markdown_have_one_section_each(capsys):
    code, out, _ = run(capsys, str(FIXTURES / "code"), str(FIXTURES / "kernels"), "--format", "md")
    assert [line for line in out.splitlines() if line.startswith("# mpsready scan: ")] == [
        f"# mpsready scan: `{FIXTURES / 'code'}`", f"# mpsready scan: `{FIXTURES / 'kernels'}`"]
    code, out, _ = run(capsys, str(FIXTURES / "code"), str(FIXTURES / "kernels"))
    assert out.count("(predicted: static analysis, nothing was run)") == 2  # piped: one summary line per path
    assert f"mpsready scan {FIXTURES / 'code'}" in out and f"mpsready scan {FIXTURES / 'kernels'}" in out

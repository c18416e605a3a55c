"""Attacks found by the adversarial pass: each one used to hang, crash or read outside the project."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpsready.errors import UsageError
from mpsready.scan import ScanConfig, scan_path
from mpsready.scan.sources.interface import ProjectFiles
from tests.scan.conftest import rows

GOOD = "import torch\nx = torch.ones(1).cuda()\n"  # one API101 at line 2: proves the rest was scanned
ROOT = Path(__file__).resolve().parents[2]


def test_named_pipe_is_a_finding_not_a_hang(write_project):
    root = write_project({"ok.py": GOOD})
    os.mkfifo(root / "fifo.py")
    os.mkfifo(root / "requirements.txt")
    r = scan_path(root)  # used to block forever in read_bytes()
    assert rows(r) == [
        ("API101", "ok.py", 2, "blocker"),
        ("INP101", "fifo.py", None, "info"),
        ("INP101", "requirements.txt", None, "info"),
    ]
    assert r.findings[2].message == "not a regular file (a named pipe); not read"
    # h40c: the rule's "Fix the permissions and scan again." did not fit a named pipe; the code stays INP101
    assert r.findings[2].fix == ("Nothing to fix if it is meant to be a named pipe: the scan skips what is not a "
                                 "regular file (reading a named pipe could block or never end). If it should hold "
                                 "source code, replace it with a regular file and scan again.")


def test_named_pipe_given_as_the_path_is_a_usage_error(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    with pytest.raises(UsageError, match=r"fifo.py: not a directory or a regular file$"):
        scan_path(tmp_path / "fifo.py")


def test_single_file_above_the_size_limit_is_skipped(tmp_path):
    (tmp_path / "big.py").write_text("x = 1\n" * 2000)
    r = scan_path(tmp_path / "big.py", ScanConfig(max_file_size=5000))
    assert rows(r) == [("INP103", "big.py", None, "info")]


def test_links_out_of_the_project_are_not_followed(write_project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(GOOD)
    (outside / "requirements.txt").write_text("flash-attn\n")
    root = write_project({"ok.py": GOOD})
    os.symlink(outside, root / "elsewhere")
    os.symlink(outside / "secret.py", root / "linked.py")
    r = scan_path(root)
    # before: elsewhere/ was walked and linked.py read, so API101 and DEP101 came from files outside the project
    assert rows(r) == [
        ("API101", "ok.py", 2, "blocker"),
        ("INP101", "elsewhere", None, "info"),
        ("INP101", "linked.py", None, "info"),
    ]
    assert r.findings[2].message == f"symbolic link to {outside.resolve()}, outside the scanned project; not followed"
    assert r.findings[2].fix == ("Nothing to fix if the link's target is not the project's code (the scan reads only "
                                 "the project); if it is, scan the target's folder too, or copy the file into the "
                                 "project.")  # h40c: was "Fix the permissions and scan again."


def test_link_inside_the_project_is_still_followed(write_project):
    root = write_project({"pkg/ok.py": GOOD})
    os.symlink("pkg/ok.py", root / "alias.py")
    assert rows(scan_path(root)) == [("API101", "pkg/ok.py", 2, "blocker")]  # the same file, scanned once


def test_includes_that_climb_out_are_refused_not_redirected(write_project):
    # '../../etc/passwd' used to be clamped to 'etc/passwd' and read from inside the project
    root = write_project({
        "requirements.txt": "-r ../../etc/passwd\n-r /etc/passwd\nnumpy\n",
        "etc/passwd": "flash-attn\n",  # a look-alike inside the project must not be read instead
    })
    r = scan_path(root)
    assert [(f.code, f.location.line, f.message) for f in r.findings] == [
        ("INP111", 1, "include '../../etc/passwd' not read: ../../etc/passwd is outside the scanned project"),
        ("INP111", 2, "include '/etc/passwd' not read: /etc/passwd is outside the scanned project"),
    ]


@pytest.mark.parametrize("relpath, other, joined", [
    ("requirements.txt", "base.txt", "base.txt"),
    ("reqs/dev.txt", "../base.txt", "base.txt"),
    ("requirements.txt", "../x.txt", "../x.txt"),
    ("a/b.txt", "../../../x.txt", "../../x.txt"),
    ("requirements.txt", "/etc/passwd", "/etc/passwd"),
])
def test_include_join_keeps_climbs(relpath, other, joined):
    assert ProjectFiles.join(relpath, other) == joined


def test_include_cycles_end(write_project):
    root = write_project({"requirements.txt": "-r other.txt\nnumpy\n", "other.txt": "-r requirements.txt\n-r other.txt\nflash-attn\n"})
    assert rows(scan_path(root)) == [("DEP101", "other.txt", 3, "blocker")]


def test_conda_file_that_is_a_yaml_list(write_project):
    root = write_project({"environment.yml": "- pytorch\n- cudatoolkit\n", "ok.py": GOOD})
    r = scan_path(root)  # used to be silently ignored
    assert rows(r) == [("API101", "ok.py", 2, "blocker"), ("INP109", "environment.yml", 1, "info")]
    assert r.findings[1].message == "a conda environment file must be a mapping with 'dependencies'; this one is a YAML list"


def test_notebook_nested_too_deeply(write_project):
    root = write_project({"deep.ipynb": "[" * 100_000 + "]" * 100_000, "ok.py": GOOD})
    r = scan_path(root)  # used to raise RecursionError out of json.loads
    assert rows(r) == [("API101", "ok.py", 2, "blocker"), ("INP110", "deep.ipynb", None, "info")]
    assert r.findings[1].message == "notebook not read: JSON nested too deeply to read"


def test_pipfile_lock_nested_too_deeply(write_project):
    root = write_project({"Pipfile.lock": "[" * 100_000, "ok.py": GOOD})
    r = scan_path(root)
    assert rows(r) == [("API101", "ok.py", 2, "blocker"), ("INP111", "Pipfile.lock", None, "info")]
    assert r.findings[1].message == "Pipfile.lock JSON is nested too deeply to read"


def test_dockerfile_exec_form_nested_too_deeply(write_project):
    root = write_project({"Dockerfile": "FROM python\nRUN " + "[" * 100_000 + "\nRUN pip install flash-attn\n"})
    # issue 22: the 100,004-character line is over the bound a line may have (INP115); the next line is read
    assert rows(scan_path(root)) == [("DEP101", "Dockerfile", 3, "blocker"), ("INP115", "Dockerfile", 2, "info")]


def test_damaged_cache_is_a_cold_cache(write_project, tmp_path):
    root = write_project({"ok.py": GOOD})
    cache = tmp_path / "cache"
    scan_path(root, ScanConfig(cache_dir=cache))
    for f in cache.rglob("*"):
        if f.is_file():
            f.write_text("[" * 100_000)
    assert rows(scan_path(root, ScanConfig(cache_dir=cache))) == [("API101", "ok.py", 2, "blocker")]


def test_cli_scan_of_a_tree_with_a_fifo_exits(tmp_path):
    (tmp_path / "ok.py").write_text(GOOD)
    os.mkfifo(tmp_path / "pipe.txt")
    os.mkfifo(tmp_path / "requirements.txt")
    p = subprocess.run([sys.executable, "-m", "mpsready", "scan", str(tmp_path), "--no-cache", "--format", "json"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert p.returncode == 1 and p.stderr == ""
    assert '"code": "INP101"' in p.stdout


def test_link_to_a_directory_inside_is_walked_once(write_project):
    root = write_project({"zpkg/ok.py": GOOD})
    os.symlink("zpkg", root / "alias")  # sorts first: used to be walked as alias/ok.py and again as zpkg/ok.py
    assert rows(scan_path(root)) == [("API101", "zpkg/ok.py", 2, "blocker")]


def test_tool_mpsready_that_is_not_a_table(write_project):
    root = write_project({"pyproject.toml": "[tool]\nmpsready = 5\n", "ok.py": GOOD})
    r = scan_path(root)  # used to be ignored without a word
    assert [(f.code, f.location.path, f.message) for f in r.findings[2:]] == [
        ("INP111", "pyproject.toml", "[tool.mpsready] = 5 ignored: expected a table")]


def test_pyproject_dependencies_of_the_wrong_type(write_project):
    root = write_project({"pyproject.toml": (
        "[project]\n"
        'name = "x"\n'
        'dependencies = "flash-attn"\n'
        "[project.optional-dependencies]\n"
        'x = [1, "numpy"]\n'
        "[build-system]\n"
        'requires = ["setuptools"]\n')})
    r = scan_path(root)
    # the lone string used to be dropped, and the blocker with it
    assert [(f.code, f.location.line, f.severity.value, f.message) for f in r.findings] == [
        ("DEP101", 3, "blocker", "dependency flash-attn: flash-attn has no macOS build (the source build needs CUDA)"),
        ("INP111", None, "info", "[project.optional-dependencies] x: 1 ignored: a requirement must be a string"),
        ("INP111", 3, "info", "[project] dependencies is a string, not a list of requirements; checked as one"),
    ]


def test_pyproject_tables_of_the_wrong_type(write_project):
    root = write_project({"pyproject.toml": "project = []\n", "sub/pyproject.toml": "[project]\noptional-dependencies = 4\n"})
    assert [(f.code, f.location.path, f.message) for f in scan_path(root).findings] == [
        ("INP111", "pyproject.toml", "[project] = [] ignored: expected a table"),
        ("INP111", "sub/pyproject.toml", "[project] optional-dependencies = 4 ignored: expected a table"),
    ]


def test_requirement_repeated_in_an_extra_stays_required(write_project):
    root = write_project({"pyproject.toml": (
        "[project]\n"
        'name = "x"\n'
        'dependencies = ["flash-attn"]\n'
        "[project.optional-dependencies]\n"
        'gpu = ["flash-attn"]\n')})
    # both used to be placed on line 3 and merged, and the required one was reported as 'optional (extra:gpu)'
    assert [(f.location.line, f.message) for f in scan_path(root).findings] == [
        (3, "dependency flash-attn: flash-attn has no macOS build (the source build needs CUDA)"),
        (5, "optional dependency flash-attn (extra:gpu): flash-attn has no macOS build (the source build needs CUDA)"),
    ]


def test_includes_of_a_pipe_or_a_directory(write_project):
    root = write_project({"requirements.txt": "-r pipe.txt\n-r reqdir\n-r .\nflash-attn\n", "reqdir/a.txt": "x\n"})
    os.mkfifo(root / "pipe.txt")
    r = scan_path(root)  # '-r pipe.txt' used to block forever
    assert [(f.code, f.location.line, f.message) for f in r.findings] == [
        ("DEP101", 4, "dependency flash-attn: flash-attn has no macOS build (the source build needs CUDA)"),
        ("INP111", 1, "include 'pipe.txt' not read: pipe.txt is not a regular file"),
        ("INP111", 2, "include 'reqdir' not read: reqdir is not a regular file"),
        ("INP111", 3, "include '.' not read: . is not a regular file"),
    ]


def test_one_odd_cell_does_not_hide_the_rest_of_a_notebook(write_project):
    nb = ('{"cells": [5, {"cell_type": "code", "source": [1]}, '
          '{"cell_type": "code", "source": "import torch\\ntorch.ones(1).cuda()\\n"}]}')
    r = scan_path(write_project({"nb.ipynb": nb}))
    # used to drop the whole notebook (and its API101) at the first odd cell
    assert [(f.code, f.location.line, f.message) for f in r.findings] == [
        ("API101", 1, ".cuda() moves to CUDA; on a Mac it raises 'Torch not compiled with CUDA enabled'"),
        ("INP110", None, "cell 1 is not an object; that cell not read"),
        ("INP110", None, "cell 2 source is not text; that cell not read"),
    ]
    assert r.findings[0].evidence["cell"] == 3


def test_non_utf8_notebook_is_reported_once(write_project):
    r = scan_path(write_project({"nb.ipynb": b"\xff\xfe{"}))
    assert [(f.code, f.message) for f in r.findings] == [("INP102", "nb.ipynb is not UTF-8 (invalid start byte at byte 0)")]


def test_setup_cfg_parse_error_is_one_line_with_its_line_number(write_project):
    r = scan_path(write_project({"setup.cfg": "[options]\ninstall_requires =\n    numpy\n  [broken\n[metadata\n"}))
    # configparser reads the rest of the file before it raises: numpy is still declared (issue 14)
    assert [(f.code, f.location.line, f.message) for f in r.findings] == [
        ("INP107", 4, "malformed requirement '[broken': Expected package name at the start of dependency specifier"),
        ("INP111", 5, "setup.cfg: line 5: '[metadata' is neither 'key = value' nor a [section]; ignored")]
    assert [(d.name, d.line) for d in r.dependencies] == [("numpy", 3)]


def test_setup_cfg_file_directive_is_followed_inside_the_project_only(write_project):
    root = write_project({
        "setup.cfg": ("[options]\ninstall_requires = file: requirements.in, missing.txt, ../../etc/passwd\n"
                      "[options.extras_require]\ngpu = file: gpu.txt\n"),
        "requirements.in": "numpy\nflash-attn  # fast\n",
        "gpu.txt": "xformers\n",
    })
    # 'file: requirements.in' used to be read as one malformed requirement (INP107) and the file never opened
    assert [(f.code, f.location.path, f.location.line, f.message) for f in scan_path(root).findings] == [
        ("DEP101", "gpu.txt", 1, "optional dependency xformers (extra:gpu): xformers has no macOS build (the source "
                                 "build needs CUDA)"),
        ("DEP101", "requirements.in", 2, "dependency flash-attn: flash-attn has no macOS build (the source build needs CUDA)"),
        ("INP111", "setup.cfg", 2, "file: 'missing.txt' not read: cannot read missing.txt: No such file or directory"),
        ("INP111", "setup.cfg", 2, "file: '../../etc/passwd' not read: ../../etc/passwd is outside the scanned project"),
    ]


ODD_NAMES = ["a|b.py", "new\nline.py", "ansi\x1b[31mred.py", "`tick`.py"]


def test_odd_file_names_cannot_break_markdown_or_drive_the_terminal(write_project):
    from mpsready.scan.formats.md import MarkdownFormat
    from mpsready.scan.formats.terminal import TerminalFormat

    r = scan_path(write_project({n: GOOD for n in ODD_NAMES}))
    md_rows = [line for line in MarkdownFormat().render(r).splitlines() if line.startswith("| `API101`")]
    # each row used to be cut by the '|' or the newline in its file name, and the ESC went to the reader
    assert [row.split(" | ")[1] for row in md_rows] == [
        "`` `tick`.py:2:5 ``", "`ansi\\x1b[31mred.py:2:5`", "`a\\|b.py:2:5`", "`new\\x0aline.py:2:5`"]
    assert all(row.count(" | ") == 4 for row in md_rows)
    text = TerminalFormat(color=False).render(r)
    assert "\x1b" not in text and "ansi\\x1b[31mred.py:2:5" in text and "new\\x0aline.py:2:5" in text


def test_json_keeps_odd_file_names_exactly(write_project):
    import json as _json

    from mpsready.scan.formats.json import JsonFormat

    r = scan_path(write_project({n: GOOD for n in ODD_NAMES}))
    doc = _json.loads(JsonFormat().render(r))
    assert sorted(f["location"]["path"] for f in doc["findings"]) == sorted([".", *ODD_NAMES])  # "." is DEP110


def test_toml_and_yaml_nested_too_deeply(write_project):
    deep = "[" * 50_000 + "]" * 50_000
    root = write_project({
        "pyproject.toml": f'[project]\nname = "x"\ndependencies = {deep}\n',
        "Pipfile": f"[packages]\nx = {deep}\n",
        "environment.yml": f"name: x\ndependencies:\n  - {deep}\n",
        "ok.py": GOOD,
    })
    r = scan_path(root)  # each used to raise RecursionError out of tomllib / PyYAML and abort the scan
    assert [(f.code, f.location.path, f.message) for f in r.findings] == [
        ("API101", "ok.py", ".cuda() moves to CUDA; on a Mac it raises 'Torch not compiled with CUDA enabled'"),
        # issue 14: the over-deep line is blanked and the rest of the TOML file is read
        ("INP112", "Pipfile", "a dotted key of more than 32 parts or brackets nested more than 100 deep; that line was not read"),
        # issue 22: the line the YAML parser stops on is skipped and the rest read (here nothing is left)
        ("INP109", "environment.yml", "'dependencies' is not a list"),
        ("INP109", "environment.yml", "YAML nested too deeply to read; line 3 skipped, the rest of the file read"),
        ("INP112", "pyproject.toml", "a dotted key of more than 32 parts or brackets nested more than 100 deep; that line was not read"),
    ]


def test_yaml_alias_bomb_in_a_conda_file(write_project):
    levels = "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}" if i else "x"] * 10) + "]\n" for i in range(12))
    r = scan_path(write_project({"conda.yaml": levels + "dependencies:\n  - *a11\n"}))
    # the finding's repr of a 10**12-item structure used to run forever
    assert [(f.code, f.message) for f in r.findings] == [
        ("INP109", "unexpected dependency entry a list of 10 items")]
    assert r.findings[0].location.line == 12  # an alias is placed where its anchor (&a11) is defined


@pytest.mark.parametrize("poison", [
    lambda doc: doc["entries"].update({k: 5 for k in doc["entries"]}),
    lambda doc: doc["entries"].update({k: {"findings": 5} for k in doc["entries"]}),
    lambda doc: doc["stats"].update({k: 5 for k in doc["stats"]}),
    lambda doc: doc["stats"].update({k: [1, 2] for k in doc["stats"]}),
])
def test_poisoned_cache_entries_are_misses(write_project, tmp_path, poison):
    import json as _json

    root = write_project({"ok.py": GOOD})
    cache = tmp_path / "cache"
    scan_path(root, ScanConfig(cache_dir=cache))
    (f,) = [p for p in cache.iterdir() if p.suffix == ".json"]
    from mpsready import cachefiles

    key = cachefiles.secret(cache)
    doc = _json.loads(cachefiles.unseal(key, f.read_bytes()))
    poison(doc)  # same salt and a valid MAC: the entries are trusted, and used to crash CodeResult.from_dict
    f.write_bytes(cachefiles.seal(key, _json.dumps(doc).encode()))
    assert rows(scan_path(root, ScanConfig(cache_dir=cache))) == [("API101", "ok.py", 2, "blocker")]


def test_sarif_uris_are_percent_encoded(write_project):
    import json as _json

    from mpsready.scan.formats.sarif import SarifFormat

    r = scan_path(write_project({n: GOOD for n in [*ODD_NAMES, "sub dir/ünï.py"]}))
    doc = _json.loads(SarifFormat().render(r))
    # raw names used to go into artifactLocation.uri, which SARIF 2.1.0 requires to be an RFC 3986 URI reference
    assert [res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in doc["runs"][0]["results"]] == [
        "%60tick%60.py", "ansi%1B%5B31mred.py", "a%7Cb.py", "new%0Aline.py", "sub%20dir/%C3%BCn%C3%AF.py",
        "%60tick%60.py"]  # DEP110 is on the project root: shown on line 1 of its first file by name


def test_a_baseline_nested_too_deeply_is_a_usage_error(tmp_path, capsys):
    # issue 34 round 5: json's RecursionError escaped as an internal error (exit 3, "a bug in mpsready")
    from mpsready.cli import main

    (tmp_path / "train.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    (tmp_path / "base.json").write_text("[" * 200000 + "]" * 200000)
    assert main(["scan", str(tmp_path), "--no-cache", "--baseline", str(tmp_path / "base.json")]) == 2
    assert capsys.readouterr().err == (f"mpsready scan: error: --baseline {tmp_path / 'base.json'}: not an mpsready "
                                       "baseline: nested too deeply\n")

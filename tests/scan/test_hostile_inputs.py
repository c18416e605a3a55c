"""Issue 14: every hostile input found by the attack run on main. Each used to abort the whole scan or
silently lose the file's dependencies; now each is a finding naming the file and the reason, and the rest of
the file (and of the project) is still read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mpsready.cli import main
from mpsready.scan import ScanConfig, scan_path
from mpsready.scan.walker import MAX_DIR_DEPTH

GOOD = "import torch\nx = torch.ones(1).cuda()\n"  # one API101 at line 2: proves the rest was scanned
API = ("API101", "ok.py", 2, ".cuda() moves to CUDA; on a Mac it raises 'Torch not compiled with CUDA enabled'")
FLASH = "flash-attn has no macOS build (the source build needs CUDA)"
DEEP_LINE = "a dotted key of more than 32 parts or brackets nested more than 100 deep; that line was not read"


def found(result):
    return [(f.code, f.location.path, f.location.line, f.message) for f in result.findings if f.code != "DEP110"]


def declared(result):
    return [(d.name, d.line) for d in result.dependencies]


def test_nbformat3_notebook_whose_cells_are_not_a_list(write_project):
    r = scan_path(write_project({"a.ipynb": '{"worksheets":[{"cells":1}],"nbformat":3}', "ok.py": GOOD}))
    assert found(r) == [API, ("INP110", "a.ipynb", None, "worksheet 1 has no 'cells' list; that worksheet not read")]


def test_nbformat3_notebook_keeps_its_good_worksheet(write_project):
    nb = {"nbformat": 3, "worksheets": [{"cells": 1}, {"cells": [{"cell_type": "code", "input": ["!pip install flash-attn\n"]}]}]}
    r = scan_path(write_project({"a.ipynb": json.dumps(nb, indent=1)}))
    assert found(r) == [("DEP101", "a.ipynb", 12, f"dependency flash-attn (cell:1): {FLASH}"),
                        ("INP110", "a.ipynb", None, "worksheet 1 has no 'cells' list; that worksheet not read")]


def test_5000_digit_int_in_a_notebook(write_project):
    nb = '{"cells":[{"cell_type":"code","execution_count":' + "1" * 5000 + ',"source":["!pip install flash-attn\\n"]}]}'
    r = scan_path(write_project({"a.ipynb": nb}))  # used to abort the scan (int-to-str digit limit)
    assert found(r) == [("DEP101", "a.ipynb", 1, f"dependency flash-attn (cell:1): {FLASH}")]


def test_5000_digit_int_in_the_root_pyproject(write_project):
    root = write_project({"pyproject.toml": "x = " + "1" * 5000 + '\n[project]\ndependencies=["flash-attn"]\n', "ok.py": GOOD})
    r = scan_path(root)  # used to abort the scan (the config reader raised ValueError), then to lose the file
    assert found(r) == [API, ("DEP101", "pyproject.toml", 3, f"dependency flash-attn: {FLASH}"),
                        ("INP114", "pyproject.toml", 1, "an integer of more than 4,000 digits (past Python's int-to-str "
                                                        "limit); that line was not read")]
    assert declared(r) == [("flash-attn", 3)]


def test_5000_digit_int_in_tool_mpsready_keeps_the_other_settings(write_project):
    root = write_project({"pyproject.toml": '[tool.mpsready]\nfail-on = "info"\nx = ' + "2" * 5000 + "\n", "ok.py": GOOD})
    r = scan_path(root)
    assert r.config.fail_on.value == "info"
    assert [(f.code, f.location.line) for f in r.findings] == [("API101", 2), ("INP114", 3)]


def test_5000_digit_int_inside_a_toml_string_is_only_text(write_project):
    r = scan_path(write_project({"pyproject.toml": '[project]\ndescription = "' + "7" * 5000 + '"\ndependencies = ["flash-attn"]\n'}))
    assert found(r) == [("DEP101", "pyproject.toml", 3, f"dependency flash-attn: {FLASH}")]


def test_tool_mpsready_nested_3000_deep_inline(write_project):
    deep = "{a=" * 3000 + "1" + "}" * 3000
    root = write_project({"pyproject.toml": f'[project]\ndependencies = ["flash-attn"]\n[tool.mpsready]\nselect = {deep}\n',
                          "ok.py": GOOD})
    r = scan_path(root)
    assert found(r) == [API, ("DEP101", "pyproject.toml", 2, f"dependency flash-attn: {FLASH}"),
                        ("INP112", "pyproject.toml", 4, DEEP_LINE)]


def test_tool_mpsready_dotted_3000_deep(write_project):
    key = "fail-on." + ".".join(["a"] * 3000)
    root = write_project({"pyproject.toml": f'[project]\ndependencies = ["flash-attn"]\n[tool.mpsready]\n{key} = 1\n',
                          "ok.py": GOOD})
    r = scan_path(root)  # used to abort the scan: repr() of the value in the config finding
    assert found(r) == [API, ("DEP101", "pyproject.toml", 2, f"dependency flash-attn: {FLASH}"),
                        ("INP112", "pyproject.toml", 4, DEEP_LINE)]


def test_tool_mpsready_value_nested_60_deep_is_reported_not_crashed(write_project):
    deep = "[" * 60 + "]" * 60
    r = scan_path(write_project({"pyproject.toml": f"[tool.mpsready]\nselect = {deep}\n", "ok.py": GOOD}))
    assert found(r)[:2] == [API, ("INP111", "pyproject.toml", None,
                                  "[tool.mpsready] select = [[[[...]]]] ignored: expected a list of strings")]


def test_setup_cfg_without_a_leading_section_header(write_project):
    r = scan_path(write_project({"setup.cfg": "x = 1\n[options]\ninstall_requires =\n  flash-attn\n"}))
    assert found(r) == [("DEP101", "setup.cfg", 4, f"dependency flash-attn: {FLASH}"),
                        ("INP111", "setup.cfg", 1, "setup.cfg: line 1: 'x = 1' comes before any [section]; line 1 not read")]


def test_setup_cfg_of_one_byte(write_project):
    r = scan_path(write_project({"setup.cfg": "[", "ok.py": GOOD}))
    assert found(r) == [API, ("INP111", "setup.cfg", 1, "setup.cfg: line 1: '[' comes before any [section]; line 1 not read")]


def test_setup_cfg_duplicate_option_keeps_the_file(write_project):
    text = "[options]\ninstall_requires = numpy\ninstall_requires =\n  flash-attn\n"
    r = scan_path(write_project({"setup.cfg": text}))
    assert found(r) == [("DEP101", "setup.cfg", 4, f"dependency flash-attn: {FLASH}"),
                        ("INP111", "setup.cfg", 3, "setup.cfg: line 3: option 'install_requires' in section 'options' "
                                                   "repeated; the later value is used")]


def test_conda_channels_that_are_not_a_list(write_project):
    r = scan_path(write_project({"environment.yml": "channels: 1\ndependencies:\n  - pytorch-cuda=12.1\n"}))
    assert found(r) == [("DEP105", "environment.yml", 3, "conda package pytorch-cuda=12.1: no osx-arm64 build"),
                        ("INP109", "environment.yml", 1, "'channels' is 1 (int), not a list; ignored")]


def test_conda_5000_digit_int_is_not_converted(write_project):
    text = "dependencies:\n  - " + "1" * 5000 + "\n  - pytorch-cuda=12.1\n"
    r = scan_path(write_project({"environment.yml": text}))
    assert [(c, p, n) for c, p, n, _m in found(r)] == [("DEP105", "environment.yml", 3), ("INP109", "environment.yml", 2)]
    assert found(r)[1][3].startswith("unexpected dependency entry 1111") and found(r)[1][3].endswith("... (int)")


def test_pipfile_source_true(write_project):
    r = scan_path(write_project({"Pipfile": '"source"=true\n[packages]\nflash-attn="*"\n'}))
    assert found(r) == [("DEP101", "Pipfile", 3, f"dependency flash-attn = '*' (packages): {FLASH}"),
                        ("INP111", "Pipfile", 1, "source = True ignored: expected [[source]] tables")]


def test_pipfile_deep_dotted_inline_table(write_project):
    text = '[packages]\nflash-attn="*"\nx = {' + ".".join(["a"] * 2000) + "=1}\n"
    r = scan_path(write_project({"Pipfile": text}))  # used to lose the file: RecursionError in repr()
    assert found(r) == [("DEP101", "Pipfile", 2, f"dependency flash-attn = '*' (packages): {FLASH}"),
                        ("INP112", "Pipfile", 3, DEEP_LINE)]


def test_pipfile_nested_70_deep_is_cut_at_64(write_project):
    text = "[packages]\nflash-attn = " + "{a=" * 70 + "1" + "}" * 70 + "\n"
    r = scan_path(write_project({"Pipfile": text}))
    assert found(r) == [("DEP101", "Pipfile", 2, f"dependency flash-attn = {{'a': {{'a': {{'a': {{...}}}}}}}} (packages): "
                                                 f"{FLASH}"),
                        ("INP112", "Pipfile", None, "tables or arrays nested more than 64 levels deep; the values below "
                                                    "that level were not read")]


def test_pipfile_lock_default_is_a_number(write_project):
    text = '{"default":1,"develop":{"flash-attn":{"version":"==2.5.0"}}}'
    r = scan_path(write_project({"Pipfile.lock": text}))
    assert found(r) == [("DEP101", "Pipfile.lock", 1, f"optional dependency flash-attn (lock:develop): {FLASH}"),
                        ("INP111", "Pipfile.lock", 1, "Pipfile.lock 'default' is 1, not an object; ignored")]


def test_pipfile_lock_that_is_not_an_object(write_project):
    r = scan_path(write_project({"Pipfile.lock": "[1]", "ok.py": GOOD}))
    assert found(r) == [API, ("INP111", "Pipfile.lock", 1, "Pipfile.lock is a JSON list, not an object; not read")]


def test_lock_file_package_is_a_number(write_project):
    r = scan_path(write_project({"poetry.lock": '"package"=1\n', "ok.py": GOOD}))
    assert found(r) == [API, ("INP111", "poetry.lock", 1, "package = 1 ignored: expected [[package]] tables")]


def test_lock_file_dotted_key_100000_deep(write_project):
    text = "x = {" + ".".join(["a"] * 100_000) + '=1}\n[[package]]\nname = "flash-attn"\nversion = "2.5.0"\n'
    r = scan_path(write_project({"poetry.lock": text}))  # used to take over 12 GB in tomllib
    assert found(r) == [("DEP101", "poetry.lock", 3, f"dependency flash-attn (lock): {FLASH}"),
                        ("INP112", "poetry.lock", 1, DEEP_LINE)]


def test_setup_py_195_nested_brackets_memoryerror(write_project):
    text = ('from setuptools import setup\nsetup(install_requires=["flash-attn"])\nx = '
            + "[lambda:" * 195 + "0" + "]" * 195 + "\n")
    r = scan_path(write_project({"setup.py": text}))  # ast.parse raises MemoryError: setup() used to be lost
    assert found(r) == [("DEP101", "setup.py", 2, f"dependency flash-attn: {FLASH}"),
                        ("INP105", "setup.py", 1, "cannot parse: nested too deeply for Python's parser (MemoryError)"),
                        ("INP112", "setup.py", 3, "setup.py line 3: nested too deeply for Python's parser; not read "
                                                  "(the other statements were)")]
    assert declared(r) == [("flash-attn", 2)]


def test_setup_py_deep_expression_in_unparse(write_project):
    text = 'from setuptools import setup\nsetup(install_requires=["flash-attn"], extras_require=' + "a+" * 900 + "a)\n"
    r = scan_path(write_project({"setup.py": text}))  # ast.unparse raised RecursionError: the file was lost
    assert found(r) == [("DEP101", "setup.py", 2, f"dependency flash-attn: {FLASH}"),
                        ("DEP108", "setup.py", 2, "dependencies computed at run time; not read (setup.py is never executed)")]
    assert r.findings[1].output_evidence() == {"expression": "<BinOp nested too deeply to show>"}


def test_one_line_notebook_maps_every_cell_to_line_1(write_project):
    cells = [{"cell_type": "code", "source": ""}] * 1000 + [
        {"cell_type": "code", "source": ["import torch\n", "torch.ones(1).cuda()\n", "!pip install flash-attn\n"]}]
    r = scan_path(write_project({"a.ipynb": json.dumps({"cells": cells})}))  # the search per cell was quadratic
    assert found(r) == [("API101", "a.ipynb", 1, API[3]), ("DEP101", "a.ipynb", 1, f"dependency flash-attn (cell:1001): {FLASH}")]
    # the cell position is kept; the project model adds the remedy (a local edit that migrate makes)
    assert r.findings[0].output_evidence() == {"cell": 1001, "cell_line": 2, "remedy": {"kind": "edit", "migrate": True}}


def test_directory_tree_1000_levels_deep(write_project):
    root = write_project({"ok.py": GOOD})
    d = root
    for _ in range(1000):
        d = d / "d"
        os.mkdir(d)
    (d / "deep.py").write_text(GOOD)
    try:
        r = scan_path(root)  # the recursive walker used to raise RecursionError and abort the scan
    finally:  # bottom-up, without recursion: shutil.rmtree (pytest's tmp_path cleanup) recurses once per level
        (d / "deep.py").unlink()
        while d != root:
            d.rmdir()
            d = d.parent
    where = "/".join(["d"] * (MAX_DIR_DEPTH + 1))
    assert found(r) == [API, ("INP112", where, None, f"directory {MAX_DIR_DEPTH + 1} levels below the project root; "
                                                     f"not walked (limit {MAX_DIR_DEPTH})")]


def test_project_cannot_raise_max_file_size(write_project):
    root = write_project({"pyproject.toml": "[tool.mpsready]\nmax-file-size = 900000000\n", "big.py": GOOD + "#" * 200})
    r = scan_path(root, ScanConfig(max_file_size=100))
    assert found(r) == [("INP103", "big.py", None, "238 bytes is above the 100-byte limit; skipped"),
                        ("INP111", "pyproject.toml", None, "[tool.mpsready] max-file-size = 900000000 ignored: the "
                                                           "scanned project may lower the 100-byte limit, not raise it "
                                                           "(use --max-file-size)")]
    assert r.config.max_file_size == 100


def test_project_may_lower_max_file_size(write_project):
    root = write_project({"pyproject.toml": "[tool.mpsready]\nmax-file-size = 100\n", "big.py": GOOD + "#" * 200})
    r = scan_path(root)
    assert found(r) == [("INP103", "big.py", None, "238 bytes is above the 100-byte limit; skipped")]


def test_reader_bug_keeps_what_was_read(monkeypatch, write_project):
    from mpsready.scan.sources import requirements

    real = requirements.add_requirement
    calls = []

    def flaky(result, text, *a, **k):
        calls.append(text)
        if len(calls) == 2:
            raise KeyError("boom")
        return real(result, text, *a, **k)

    monkeypatch.setattr(requirements, "add_requirement", flaky)
    # issue 22: the line the bug hit is a finding, and the reader goes on with the next line
    r = scan_path(write_project({"requirements.txt": "numpy\nscipy\nflash-attn\n"}))
    assert found(r) == [("DEP101", "requirements.txt", 3, f"dependency flash-attn: {FLASH}"),
                        ("INP115", "requirements.txt", 2, "line 2 not read: KeyError: 'boom'; the rest of the file "
                                                          "was read")]


def test_a_reader_bug_outside_a_line_still_stops_that_reader_only(monkeypatch, write_project):
    from mpsready.scan.sources import requirements

    def broken(text):
        raise KeyError("boom")

    monkeypatch.setattr(requirements, "_logical_lines", broken)
    r = scan_path(write_project({"requirements.txt": "flash-attn\n", "environment.yml": "dependencies:\n  - cudatoolkit=11.8\n"}))
    assert ("INP113", "requirements.txt", None, "requirements reader stopped: KeyError: 'boom'; 0 dependencies read "
            "before that are kept") in found(r)
    assert [(c, line) for c, p, line, _m in found(r) if p == "environment.yml"] == [("DEP105", 2)]


@pytest.mark.parametrize("text,expected", [
    ("gen_*.py\nbuild/\n", ["keep.py", "src/a.py"]),
    ("*.py\n!keep.py\n", ["keep.py"]),  # a later negation re-includes
    ("/a.py\n", ["build/gen.py", "gen_x.py", "keep.py", "src/a.py"]),  # anchored: only a root a.py
    ("src\n", ["build/gen.py", "gen_x.py", "keep.py"]),
    ("", ["build/gen.py", "gen_x.py", "keep.py", "src/a.py"]),
])
def test_gitignore_is_respected(write_project, text, expected):
    from mpsready.scan.walker import walk

    root = write_project({".gitignore": text, "keep.py": "x = 1\n", "src/a.py": "x = 1\n", "build/gen.py": "x = 1\n",
                          "gen_x.py": "x = 1\n"})
    assert [f.relpath for f in walk(root, max_file_size=10**6).files] == expected
    assert scan_path(root).files_scanned == len(expected)


def test_nested_gitignore_and_no_gitignore(write_project):
    root = write_project({"keep.py": "x = 1\n", "sub/.gitignore": "gen_*.py\n", "sub/gen_a.py": GOOD, "sub/b.py": "x = 1\n",
                          "gen_top.py": "x = 1\n"})
    from mpsready.scan.walker import walk
    assert [f.relpath for f in walk(root, max_file_size=10**6).files] == ["gen_top.py", "keep.py", "sub/b.py"]
    assert [f.relpath for f in walk(root, max_file_size=10**6, gitignore=False).files] == [
        "gen_top.py", "keep.py", "sub/b.py", "sub/gen_a.py"]
    assert main(["scan", str(root), "--no-cache", "--format", "json", "--output", str(root.parent / "s.json")]) == 0
    assert main(["scan", str(root), "--no-cache", "--no-gitignore", "--format", "json",
                 "--output", str(root.parent / "s.json")]) == 1


@pytest.mark.parametrize("name", ["base\\x00.txt", "base\\udfef.txt"])
def test_setup_py_reading_a_file_whose_name_cannot_exist(write_project, name):
    # found by scripts/fuzz_long.py: a NUL byte or a lone surrogate in the name made pathlib raise out of the reader
    text = f'from setuptools import setup\nsetup(install_requires=open("{name}").read().splitlines() + ["flash-attn"])\n'
    r = scan_path(write_project({"setup.py": text}))
    shown = name
    assert found(r) == [
        ("DEP101", "setup.py", 2, f"dependency flash-attn: {FLASH}"),
        ("DEP108", "setup.py", 2, "dependencies computed at run time; not read (setup.py is never executed)"),
        ("INP111", "setup.py", 2, f"setup.py reads '{shown}', which was not read: '{shown}' is not a usable file name "
                                  f"({'ValueError' if 'x00' in name else 'UnicodeEncodeError'})"),
    ]


def test_conda_text_with_a_lone_surrogate():
    # found by scripts/fuzz_long.py: libyaml's reader raised UnicodeEncodeError out of the reader
    from mpsready.scan.sources.conda import CondaSource
    from mpsready.scan.sources.interface import ProjectFiles

    res = CondaSource().collect("environment.yml", "dependencies:\n  - py\udc99torch\n", ProjectFiles(Path("."), 10))
    assert [(f.rule.code, f.line, f.message) for f in res.findings] == [
        ("INP109", None, "YAML does not parse: not valid Unicode (a lone surrogate at character 20)")]


def test_an_elif_chain_deeper_than_the_analysis_can_walk_is_a_finding_of_its_own(write_project):
    # 1,000 branches parse (Python's parser copes) but are 1,000 nested If nodes: the scan exited 3 (RecursionError)
    chain = "x = 1\nif x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 1000))
    r = scan_path(write_project({"deep.py": chain, "ok.py": GOOD}))
    assert found(r) == [API, ("INP105", "deep.py", 1, "cannot analyse: the code nests deeper than the analysis can walk "
                                                       "(RecursionError); the file's code was not checked")]

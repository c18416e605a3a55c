"""``mpsready run`` end to end: the child process, program forms, JSON document, exit codes, DataLoader workers."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from mpsready.run.command import parse_program  # noqa: E402
from mpsready.errors import UsageError  # noqa: E402


def _mpsready(*args, cwd):
    return subprocess.run([sys.executable, "-m", "mpsready", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


LOADER = '''\
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    ds = TensorDataset(torch.randn(16, 3), torch.randint(0, 2, (16,)))
    loader = DataLoader(ds, batch_size=4, num_workers=1)
    model = torch.nn.Linear(3, 2).to("mps")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x, y = x.to("mps"), y.to("mps")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("batches on", x.device)


if __name__ == "__main__":
    main()
'''


def _installed_torch() -> str:
    import torch

    return torch.version.__version__


def test_dataloader_workers_json_document(tmp_path):
    (tmp_path / "train.py").write_text(LOADER)
    p = _mpsready("run", "--torch", "2.13", "--format", "json", "-o", "out.json", "--", "python", "train.py",
                  cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "batches on mps:0\n"
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["schema"] == {"name": "mpsready.run", "version": 1}
    assert (doc["basis"], doc["basis_class"], doc["outcome"], doc["first_failure"], doc["steps"]) == (
        "emulated", "predicted", "completed", None, 4)
    assert doc["target"] == {"torch": "2.13.0", "torch_requested": "2.13", "macos": "15.5", "fallback": False,
                             "fallback_requested": False, "mps_available": True, "machine": "arm64",
                             "torch_version_seen": {"value": "2.13.0", "installed": _installed_torch(),
                                                    "read": False}}
    assert doc["program"] == {"kind": "script", "target": str(tmp_path / "train.py"), "argv": ["train.py"]}
    assert "outcome: completed; 4 optimizer step(s)" in p.stderr


MODULE = '''\
import sys
import torch
x = torch.zeros(2, dtype=torch.float64).to("mps")
'''


def test_module_form_fails_with_exit_1(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(MODULE)
    p = _mpsready("run", "--torch", "2.13", "--", "python", "-m", "pkg.train", "--lr", "1", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "first failure on the Mac: pkg/train.py:3" in p.stdout
    assert "TypeError: Cannot convert a MPS Tensor to float64 dtype" in p.stderr


def test_script_without_python_and_usage_errors(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nprint(torch.ones(1, device='mps').device)\n")
    p = _mpsready("run", "--torch", "2.13", "--", "ok.py", cwd=tmp_path)
    assert (p.returncode, p.stdout.splitlines()[0]) == (0, "mps:0")
    assert _mpsready("run", "--", "python", "missing.py", cwd=tmp_path).returncode == 2
    bad = _mpsready("run", "--torch", "2.99", "--", "ok.py", cwd=tmp_path)
    assert bad.returncode == 2 and "no MPS support table for torch 2.99" in bad.stderr
    assert _mpsready("run", cwd=tmp_path).returncode == 2


@pytest.mark.parametrize("words,kind,target,argv", [
    (["--", "python", "t.py", "-x"], "script", "t.py", ("t.py", "-x")),
    (["python3", "-u", "t.py"], "script", "t.py", ("t.py",)),
    (["python", "-m", "a.b", "--k", "v"], "module", "a.b", ("a.b", "--k", "v")),
    (["t.py"], "script", "t.py", ("t.py",)),
])
def test_parse_program(tmp_path, words, kind, target, argv):
    (tmp_path / "t.py").write_text("")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "__init__.py").write_text("raise SystemExit('the parent must not import the package')\n")
    prog = parse_program(words, cwd=str(tmp_path))
    assert (prog.kind, Path(prog.target).name if kind == "script" else prog.target, prog.argv) == (kind, target, argv)


@pytest.mark.parametrize("words,msg", [([], "give the program"), (["python", "-c", "x"], "python -c"),
                                       (["python", "-m"], "needs a module"), (["python", "-m", "a-b"], "not a module")])
def test_parse_program_errors(tmp_path, words, msg):
    with pytest.raises(UsageError, match=msg):
        parse_program(words, cwd=str(tmp_path))


@pytest.mark.parametrize("name,content,words,msg", [
    (None, None, ["python", "-m", "mpsready_no_such_mod"],
     r"no module named 'mpsready_no_such_mod' in .* or this Python's path \(python -m mpsready_no_such_mod\)"),
    (None, None, ["python", "-m", "mpsready_no_such_pkg.train"], r"no module named 'mpsready_no_such_pkg'"),
    ("tool", b"\x7fELF\x02\x01\x01\x00\x00", ["tool"], r"tool is not a Python script \(a binary file\)"),
    ("go.sh", b"#!/bin/bash\npython train.py\n", ["go.sh"], r"go.sh is a script for '/bin/bash', not Python"),
])
def test_not_a_python_program_is_a_usage_error(tmp_path, name, content, words, msg):
    """h40: `run -- python -m nosuchmod` ended inconclusive and `run -- /bin/true` reported a SyntaxError."""
    if name:
        (tmp_path / name).write_bytes(content)
    with pytest.raises(UsageError, match=msg):
        parse_program(words, cwd=str(tmp_path))


def test_python_shebang_and_local_module_are_programs(tmp_path):
    (tmp_path / "train").write_text("#!/usr/bin/env python3\nimport torch\n")
    (tmp_path / "localmod.py").write_text("")
    assert parse_program(["train"], cwd=str(tmp_path)).kind == "script"
    assert parse_program(["python", "-m", "localmod"], cwd=str(tmp_path)).target == "localmod"


@pytest.mark.parametrize("argv,msg", [
    (["--macos", "99"], "there is no macOS 99 (releases are 10.x, 11 to 15, then 26 and 27"),
    (["--macos", "16.0"], "there is no macOS 16"),
    (["--mac", "intel", "--torch", "2.2", "--macos", "27.0"], "an Intel Mac runs macOS 26 at most"),
])
def test_macos_that_does_not_exist_is_a_usage_error(tmp_path, capsys, argv, msg):
    """h40: `--macos 99` and `--mac intel --macos 27.0` were accepted."""
    from mpsready.cli import main

    (tmp_path / "t.py").write_text("raise SystemExit('must not run')\n")
    assert main(["run", *argv, "--", str(tmp_path / "t.py")]) == 2
    assert msg in capsys.readouterr().err


@pytest.mark.parametrize("argv,msg", [
    (["--max-steps", "0"], "--max-steps must be at least 1"), (["--time-limit", "-1"], "--time-limit must be 0 (no limit) or a positive number of seconds"),
    (["--macos", "sonoma"], "not a macOS version"), (["--torch", "2.1"], "no MPS support table for torch 2.1"),
    # h40b: inf and 1e20 overflowed the child's timer ("timestamp out of range for platform time_t"), inconclusive,
    # blamed on the program
    *[(["--time-limit", v], "mpsready run: error: --time-limit must be 0 (no limit) or a positive number of seconds, "
       "at most 31,536,000 (a year)\n") for v in ("inf", "1e20", "nan", "31536001")],
])
def test_bad_options_exit_2_before_the_program_runs(tmp_path, capsys, argv, msg):
    from mpsready.cli import main

    (tmp_path / "t.py").write_text("raise SystemExit('must not run')\n")
    assert main(["run", *argv, "--", str(tmp_path / "t.py")]) == 2
    assert msg in capsys.readouterr().err


def test_missing_dependency_exits_2_and_says_what_is_missing(tmp_path):
    """Pytorch-UNet without torchvision: not a Mac failure, exit 2, and report item 4 not checked."""
    (tmp_path / "train.py").write_text("import torch\nx = torch.ones(2, device='mps')\nimport mpsready_absent_dep\n")
    p = _mpsready("run", "--torch", "2.5", "--macos", "14.4", "--format", "json", "-o", "run.json", "--",
                  "python", "train.py", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "outcome: inconclusive; 0 optimizer step(s)" in p.stderr
    assert "first failure on the Mac" not in p.stderr
    assert "missing here: module mpsready_absent_dep;" in p.stderr
    doc = json.loads((tmp_path / "run.json").read_text())
    assert (doc["outcome"], doc["exit_code"], doc["program_error"]["kind"]) == ("inconclusive", 2, "environment")
    r = _mpsready("report", "--run", "run.json", "--format", "json", "--out", "rep", cwd=tmp_path)
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    item4 = next(i for i in rep["checklist"] if i["number"] == 4)
    assert (item4["status"], item4["label"], rep["verdict"]["name"]) == ("not_checked", "not checked", "mac_for_dev"), \
        r.stderr


def test_the_programs_own_module_is_not_replaced_by_the_runners(tmp_path):
    """h40: a project's own yaml.py was answered by the PyYAML mpsready's runner had loaded; the program's folder
    comes first, as under a plain python (a folder without __init__.py never shadows an installed module)."""
    (tmp_path / "yaml.py").write_text("NAME = 'the project yaml'\n")
    (tmp_path / "rich").mkdir()  # a namespace portion: the installed rich still answers, as under plain python
    (tmp_path / "t.py").write_text("import yaml, rich\nprint(getattr(yaml, 'NAME', 'PyYAML'), hasattr(rich, 'print'))\n")
    p = _mpsready("run", "--torch", "2.13", "--", "python", "t.py", cwd=tmp_path)
    assert (p.returncode, p.stdout.splitlines()[0]) == (0, "the project yaml True"), p.stderr


def test_unshadow_forgets_third_party_modules_only(tmp_path, monkeypatch):
    import sys
    import types

    import json  # noqa: F401
    import packaging  # noqa: F401

    from mpsready.childproc import unshadow

    for name in ("yaml.py", "json.py", "packaging.py", "notloaded.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "pkgx").mkdir()
    (tmp_path / "pkgx" / "__init__.py").write_text("")
    fake = {n: types.ModuleType(n) for n in ("yaml", "yaml.nodes", "pkgx", "yamlish")}
    for n, m in fake.items():
        monkeypatch.setitem(sys.modules, n, m)
    gone = unshadow([str(tmp_path)])
    assert sorted(gone) == ["pkgx", "yaml"]
    assert [n for n in fake if n in sys.modules] == ["yamlish"]
    assert "json" in sys.modules and "packaging" in sys.modules  # the standard library and KEEP_LOADED stay

"""Start-up is structural: building the parser imports no stage, and the rule registry no stage logic.

Timings live in benchmarks/startup_bench.py; these tests check what gets imported, in a fresh interpreter.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")

# Stage packages building the parser must not touch at all (scan's engine: the scan package's other
# modules are its stage too, so the whole package is listed).
STAGES = ("scan", "report", "trace", "emulate", "env", "record", "compare", "migrate", "numerics", "ops",
          "run", "check", "step")
# migrate keeps its arguments in its own cli module (owned by the migrate stage); its package __init__ and
# that module import nothing else (the migrate stage's own tests keep them so).
ALLOWED = {"mpsready.migrate", "mpsready.migrate.cli"}


def _modules_after(code: str) -> list[str]:
    """The mpsready modules loaded after running ``code`` in a fresh interpreter (this checkout's src)."""
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mpsready'))))"],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _stage_modules(mods: list[str]) -> list[str]:
    return [m for m in mods if m.split(".")[1:2] and m.split(".")[1] in STAGES and m not in ALLOWED]


def test_help_imports_no_stage():
    mods = _modules_after("import contextlib, io\nfrom mpsready.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['--help']) == 0")
    assert _stage_modules(mods) == []
    assert "mpsready.commands.scan" in mods and "mpsready.cli" in mods


@pytest.mark.parametrize("command", ["scan", "run", "check", "report", "trace", "compare"])
def test_subcommand_help_imports_no_stage(command):
    mods = _modules_after("import contextlib, io\nfrom mpsready.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          f"    assert main([{command!r}, '--help']) == 0")
    assert _stage_modules(mods) == []


def test_rule_registry_loads_metadata_modules_only():
    mods = _modules_after("from mpsready import rules\nrules.all_rules()")
    logic = [m for m in _stage_modules(mods)
             if not (m.count(".") == 1 or m.endswith(".rules") or m.startswith("mpsready.scan.rules.")
                     # what migrate fixes: each transform's spec, metadata without libcst
                     or m == "mpsready.migrate.fixability" or m.startswith("mpsready.migrate.specs"))]
    assert logic == []
    assert not [m for m in mods if m == "libcst" or m.startswith("libcst.")]
    assert not [m for m in mods if m.startswith(("mpsready.emulate", "mpsready.run", "mpsready.step"))]


def test_static_sarif_loads_no_dynamic_stage(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    mods = _modules_after("import contextlib, io\nfrom mpsready.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          f"    main(['scan', '--no-cache', '--format', 'sarif', {str(tmp_path)!r}])")
    dynamic = [m for m in mods if m.startswith(("mpsready.trace.", "mpsready.record.", "mpsready.emulate",
                                                "mpsready.run", "mpsready.compare.", "mpsready.numerics.",
                                                "mpsready.env.", "mpsready.report.", "mpsready.check"))]
    assert [m for m in dynamic if not m.endswith(".rules")] == []


def test_python_only_scan_loads_no_declaration_reader(tmp_path):
    # a 1-file project (a pre-commit hook's case): no reader, packaging, pathspec or tempfile (benchmarks/startup_bench.py)
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    code = ("import contextlib, io, sys\nfrom mpsready.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['scan', '--no-cache', '--format', 'json', {str(tmp_path)!r}])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('packaging', 'pathspec', 'tempfile')))")
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    # dockerfile for is_container_recipe (the project model's reach), tomlfile for [tool.mpsready]
    readers = [m for m in _modules_after(code) if m.startswith("mpsready.scan.sources.")]
    assert readers == ["mpsready.scan.sources.dockerfile", "mpsready.scan.sources.interface",
                       "mpsready.scan.sources.tomlfile"]


def test_argument_literals_match_the_enums():
    from mpsready.commands import report as report_args, scan as scan_args
    from mpsready.findings import Severity, Verdict
    from mpsready.scan import formats

    assert scan_args.SEVERITIES == tuple(s.value for s in Severity)
    assert (report_args.MAC_FOR_DEV, report_args.STAY_ON_CUDA) == (Verdict.MAC_FOR_DEV.value,
                                                                    Verdict.STAY_ON_CUDA.value)
    assert scan_args.FORMAT_NAMES == tuple(formats.REGISTRY)
    assert {n: formats.get(n).name for n in formats.REGISTRY} == {n: n for n in formats.REGISTRY}


def test_one_default_macos():
    from mpsready.commands import run as run_args
    from mpsready.trace import predict

    assert predict.DEFAULT_MACOS == run_args.DEFAULT_MACOS == "15.5"


def test_lazy_run_imports_the_stage_when_called(monkeypatch):
    from mpsready.commands import LazyRun

    calls = []
    fake = type(sys)("mpsready_fake_stage")
    fake.run = lambda args: calls.append(args) or 7
    monkeypatch.setitem(sys.modules, "mpsready_fake_stage", fake)
    assert LazyRun("mpsready_fake_stage")("ARGS") == 7
    assert calls == ["ARGS"]
    assert repr(LazyRun("x.y")) == "LazyRun('x.y', 'run')"


def test_shipped_yaml_reads_as_the_safe_loader():
    import yaml
    from importlib import resources

    from mpsready.scan import knowledge

    for name in ("packages.yaml", "cuda_api.yaml"):
        text = resources.files("mpsready.scan").joinpath(f"data/{name}").read_text(encoding="utf-8")
        assert json.dumps(knowledge.load_shipped_yaml(name)) == json.dumps(yaml.safe_load(text))

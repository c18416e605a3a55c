import json
import subprocess
import sys

import pytest

from mpsready.cli import main
from mpsready.env import collect_env, diff_env
from mpsready.env.collect import machine_facts
from mpsready.env.rules import evaluate
from mpsready.env.torchinfo import mps_meaning


class FakeMac:
    """A Mac as the env collector sees it: sysctl values and versions are given, nothing is asked."""

    def __init__(self, arch="arm64", translated=0, arm64=1, macos="14.4.1"):
        self.arch, self.translated, self.arm64, self.macos = arch, translated, arm64, macos

    def system(self):
        return "Darwin"

    def release(self):
        return "23.4.0"

    def interpreter_machine(self):
        return self.arch

    def mac_version(self):
        return self.macos

    def sysctl_int(self, name):
        return {"sysctl.proc_translated": self.translated, "hw.optional.arm64": self.arm64,
                "hw.memsize": 34359738368}.get(name)

    def sysctl_str(self, name):
        return {"machdep.cpu.brand_string": "Apple M2 Pro"}.get(name)

    def read_text(self, path):
        return None


def codes(rec):
    return [f["code"] for f in rec["findings"]]


def test_rosetta_detected_on_apple_silicon():
    m = machine_facts(FakeMac(arch="x86_64", translated=1))
    assert m["rosetta"]["translated"] is True and m["rosetta"]["proc_translated"] == 1
    assert m["apple_silicon"] is True and m["chip"] == "Apple M2 Pro"
    assert m["memory_bytes"] == 34359738368 and m["unified_memory"] is True
    rec = collect_env(platform=FakeMac(arch="x86_64", translated=1), environ={}, with_torch=False)
    assert "ENV102" in codes(rec)
    f = next(f for f in rec["findings"] if f["code"] == "ENV102")
    assert f["severity"] == "blocker" and f["basis"] == "observed"


def test_native_arm64_is_not_rosetta_and_intel_mac_has_no_proc_translated():
    assert machine_facts(FakeMac())["rosetta"]["translated"] is False
    intel = machine_facts(FakeMac(arch="x86_64", translated=None, arm64=None))
    assert intel["rosetta"] == {"translated": False, "proc_translated": None,
                                "source": intel["rosetta"]["source"]}
    assert intel["apple_silicon"] is False and intel["unified_memory"] is False


def test_real_env_record_shape_and_envelope(tmp_path):
    rec = collect_env(project=tmp_path)  # tmp_path is no git repo
    assert rec["schema"] == {"name": "mpsready.env", "version": 1} and rec["basis"] == "observed"
    assert rec["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    import torch

    assert rec["torch"]["version"] == torch.__version__
    assert rec["torch"]["mps"]["built"] is torch.backends.mps.is_built()
    assert rec["torch"]["mps"]["available"] is torch.backends.mps.is_available()
    assert rec["precision"]["float32_matmul_precision"] == torch.get_float32_matmul_precision()
    assert rec["packages"]["torch"] == torch.__version__
    assert "error" in rec["project"]["git"]
    assert set(rec["env_vars"]) >= {"PYTORCH_ENABLE_MPS_FALLBACK", "PYTORCH_MPS_HIGH_WATERMARK_RATIO",
                                    "PYTORCH_MPS_FAST_MATH", "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE"}
    json.dumps(rec, allow_nan=False)


def test_git_commit_and_dirty_state(tmp_path):
    def git(*a):
        subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    rec = collect_env(project=tmp_path, with_torch=False, environ={})
    assert rec["project"]["git"]["commit"] == head and rec["project"]["git"]["dirty"] is False
    (tmp_path / "a.py").write_text("x = 2\n")
    rec = collect_env(project=tmp_path, with_torch=False, environ={})
    assert rec["project"]["git"]["dirty"] is True and rec["project"]["git"]["changed_files"] == 1
    assert "ENV109" in codes(rec)


def test_mps_combinations_have_the_documented_meanings():
    assert "not built with MPS" in mps_meaning(False, False)
    assert "12.3" in mps_meaning(True, False)
    assert mps_meaning(True, True).startswith("MPS is built and available")
    assert mps_meaning(None, None).startswith("unknown")


def _rec(**over):
    base = {"schema": {"name": "mpsready.env", "version": 1}, "os": {"system": "Darwin", "macos_version": "14.4"},
            "machine": {}, "python": {"arch": "arm64"},
            "torch": {"installed": True, "version": "2.13.0", "mps": {"built": True, "available": False},
                      "cuda": {"available": False}},
            "env_vars": {}, "precision": {"deterministic_algorithms": True}}
    base.update(over)
    return base


def test_env_rules_on_hand_made_records():
    assert [f.code for f in evaluate(_rec())] == ["ENV101"]
    assert evaluate(_rec())[0].severity.value == "blocker"
    linux = _rec(os={"system": "Linux"}, torch={"installed": True, "mps": {"built": False, "available": False}})
    assert [(f.code, f.severity.value) for f in evaluate(linux)] == [("ENV105", "info")]
    old = _rec(os={"system": "Darwin", "macos_version": "12.2.1"})
    assert [f.code for f in evaluate(old)] == ["ENV108", "ENV101"]
    fb = _rec(torch={"installed": True, "mps": {"built": True, "available": True}},
              env_vars={"PYTORCH_ENABLE_MPS_FALLBACK": "1", "PYTORCH_MPS_FAST_MATH": "1"})
    assert [f.code for f in evaluate(fb)] == ["ENV103", "ENV107"]
    assert evaluate(_rec(env_vars={"PYTORCH_ENABLE_MPS_FALLBACK": "0"},
                         torch={"installed": True, "mps": {"built": True, "available": True}})) == []
    cuda = _rec(os={"system": "Linux"}, torch={"installed": True, "mps": {"built": False, "available": False},
                                                "cuda": {"available": True}},
                precision={"cudnn_allow_tf32": True, "cuda_matmul_allow_tf32": False,
                           "float32_matmul_precision": "highest", "deterministic_algorithms": True})
    tf = [f for f in evaluate(cuda) if f.code == "ENV106"]
    assert len(tf) == 1 and tf[0].message == "TF32 is on for CUDA: cudnn_allow_tf32"
    off = dict(cuda, env_vars={"NVIDIA_TF32_OVERRIDE": "0"})
    assert [f.code for f in evaluate(off)] == ["ENV105"]
    nt = _rec(torch={"installed": False, "error": "ModuleNotFoundError: No module named 'torch'"})
    assert [f.code for f in evaluate(nt)] == ["ENV104"]


def test_env_without_torch_reports_absence(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_torch(name, *a, **k):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    rec = collect_env(environ={})
    assert rec["torch"]["installed"] is False and rec["precision"] == {}
    assert rec["torch"]["mps"] == {"built": None, "available": None, "meaning": mps_meaning(None, None),
                                   "source": rec["torch"]["mps"]["source"]}
    assert "ENV104" in codes(rec)


A = {"schema": {"name": "mpsready.env", "version": 1}, "mpsready": "0.1.0", "created": "2026-01-01T00:00:00Z",
     "basis": "observed", "python": {"version": "3.11.7", "arch": "x86_64", "executable": "/a/python"},
     "os": {"system": "Linux", "macos_version": None},
     "torch": {"installed": True, "version": "2.13.0+cu126", "cuda_version": "12.6",
               "mps": {"built": False, "available": False, "meaning": "x"}},
     "precision": {"float32_matmul_precision": "high", "cudnn_allow_tf32": True},
     "env_vars": {"PYTORCH_ENABLE_MPS_FALLBACK": None, "NVIDIA_TF32_OVERRIDE": None},
     "packages": {"numpy": "2.1.0", "rich": "13.7.0", "torch": "2.13.0+cu126"}, "findings": [{"code": "ENV106"}]}
B = {"schema": {"name": "mpsready.env", "version": 1}, "mpsready": "0.1.0", "created": "2026-02-02T00:00:00Z",
     "basis": "observed", "python": {"version": "3.11.7", "arch": "arm64", "executable": "/b/python"},
     "os": {"system": "Darwin", "macos_version": "14.4.1"},
     "torch": {"installed": True, "version": "2.13.0", "cuda_version": None,
               "mps": {"built": True, "available": True, "meaning": "y"}},
     "precision": {"float32_matmul_precision": "highest", "cudnn_allow_tf32": True},
     "env_vars": {"PYTORCH_ENABLE_MPS_FALLBACK": "1", "NVIDIA_TF32_OVERRIDE": None},
     "packages": {"numpy": "2.1.0", "rich": "14.0.0", "torch": "2.13.0"}, "findings": []}

EXPECTED_DIFF = [
    ("env_vars.PYTORCH_ENABLE_MPS_FALLBACK", None, "1", True),
    ("os.macos_version", None, "14.4.1", True),
    ("packages.torch", "2.13.0+cu126", "2.13.0", True),
    ("precision.float32_matmul_precision", "high", "highest", True),
    ("python.arch", "x86_64", "arm64", True),
    ("torch.cuda_version", "12.6", None, True),
    ("torch.mps.available", False, True, True),
    ("torch.mps.built", False, True, True),
    ("torch.version", "2.13.0+cu126", "2.13.0", True),
    ("os.system", "Linux", "Darwin", False),
    ("packages.rich", "13.7.0", "14.0.0", False),
]


def test_env_diff_numerics_first():
    got = [(d.path, d.a, d.b, d.numerics) for d in diff_env(A, B)]
    assert got == EXPECTED_DIFF
    assert diff_env(A, A) == []


def test_env_diff_cli(tmp_path, capsys):
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(A))
    pb.write_text(json.dumps(B))
    out = tmp_path / "d.json"
    assert main(["env", "--diff", str(pa), str(pb), "--format", "json", "--output", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["schema"]["name"] == "mpsready.env-diff" and doc["numerics_differences"] == 9
    assert [d["path"] for d in doc["differences"]] == [p for p, *_ in EXPECTED_DIFF]
    assert main(["env", "--diff", str(pa), str(pa)]) == 0
    assert main(["env", "--diff", str(pa), str(tmp_path / "missing.json")]) == 2
    assert "env record not found" in capsys.readouterr().err
    pb.write_text("{not json")
    assert main(["env", "--diff", str(pa), str(pb)]) == 2


def test_env_cli_json_output(tmp_path):
    out = tmp_path / "env.json"
    assert main(["env", "--format", "json", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["schema"]["name"] == "mpsready.env" and doc["project"] is None
    assert main(["env", "--project", str(tmp_path / "nope")]) == 2


@pytest.mark.parametrize("value,fires", [("1", True), ("0", False), ("", False)])
def test_fallback_env_var_truthiness(value, fires):
    rec = _rec(torch={"installed": True, "mps": {"built": True, "available": True}},
               env_vars={"PYTORCH_ENABLE_MPS_FALLBACK": value})
    assert ("ENV103" in [f.code for f in evaluate(rec)]) is fires


def test_terminal_table_keeps_built_and_available_apart():
    from rich.console import Console

    from mpsready.env.render import render_terminal

    rec = collect_env(platform=FakeMac(arch="x86_64", translated=1), environ={"PYTORCH_ENABLE_MPS_FALLBACK": "1"})
    console = Console(record=True, width=200)
    render_terminal(rec, console=console)
    text = console.export_text()
    assert "mps is_built" in text and "mps is_available" in text
    assert "rosetta" in text and "yes (x86_64 Python translated)" in text
    assert "PYTORCH_ENABLE_MPS_FALLBACK" in text and "ENV102 blocker (observed)" in text


def test_memory_limit_disabled_and_extra_mps_vars_are_recorded():
    from mpsready.env.collect import env_vars

    rec = _rec(torch={"installed": True, "mps": {"built": True, "available": True}},
               env_vars={"PYTORCH_MPS_HIGH_WATERMARK_RATIO": "0.0"})
    assert [f.code for f in evaluate(rec)] == ["ENV111"]
    rec["env_vars"]["PYTORCH_MPS_HIGH_WATERMARK_RATIO"] = "1.4"
    assert evaluate(rec) == []
    got = env_vars({"PYTORCH_MPS_NEW_KNOB": "1", "PYTORCH_ENABLE_MPS_FALLBACK": "1", "HOME": "/root"})
    assert got["PYTORCH_MPS_NEW_KNOB"] == "1" and got["PYTORCH_ENABLE_MPS_FALLBACK"] == "1"
    assert "HOME" not in got and got["NVIDIA_TF32_OVERRIDE"] is None


def test_keys_never_cut_at_100_columns_and_text_for_an_issue(tmp_path):
    """Issue 38: at 100 columns the table cut its own keys ("PYTORCH_MPS_HIGH_WATERMARK_RA…"); --format text
    gives plain lines to paste into an issue."""
    from rich.console import Console

    from mpsready.env.render import env_rows, render_terminal, to_text

    long_value = "/a/very/long/path/" + "x" * 150
    rec = collect_env(platform=FakeMac(arch="arm64"), environ={"PYTORCH_MPS_HIGH_WATERMARK_RATIO": "0.0",
                                                               "PYTORCH_ENABLE_MPS_FALLBACK": long_value})
    console = Console(record=True, width=100)
    render_terminal(rec, console=console)
    table = console.export_text()
    assert "PYTORCH_MPS_HIGH_WATERMARK_RATIO" in table and "…" not in table
    text = to_text(rec)
    lines = text.splitlines()
    assert lines[0] == "```text" and lines[-1] == "```" and lines[1] == "mpsready env (observed in this environment)"
    width = max(len(k) for k, _ in env_rows(rec))
    assert f"{'PYTORCH_ENABLE_MPS_FALLBACK'.ljust(width)} : {long_value}" in lines  # whole, one line
    built = str(rec["torch"]["mps"]["built"])
    assert f"{'mps is_built'.ljust(width)} : {built}" in lines
    out = tmp_path / "env.txt"
    assert main(["env", "--format", "text", "--output", str(out)]) == 0
    assert out.read_text().startswith("```text\nmpsready env (observed in this environment)\n")

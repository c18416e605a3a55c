"""Outlook rules, collections of subprojects, the content-hash cache, the rule docs and the knowledge base."""

import subprocess
import sys
from pathlib import Path

import yaml

from mpsready import rules as registry
from mpsready.findings import Scope, Severity
from mpsready.scan import ScanConfig, knowledge, scan_path
from tests.scan.conftest import rows

REPO = Path(__file__).resolve().parents[2]


def test_outlook_levels(write_project):
    assert scan_path(write_project({"a.py": "import torch\nx = torch.ones(1)\n"})).outlook.value == "runs_on_mac"


def test_required_cuda_only_dependency_without_alternative_stays_on_cuda(write_project):
    r = scan_path(write_project({"requirements.txt": "tinycudann\nnumpy\n"}))
    assert r.outlook.value == "stay_on_cuda"
    assert [(f.code, f.location.line) for f in r.limiting] == [("DEP101", 1)]


def test_optional_extras_and_distributed_code_do_not_limit_the_main_path(write_project):
    r = scan_path(write_project({"pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\n'
                                                  'gpu = ["tinycudann"]\n',
                                 "distributed/train_ddp.py": "import torch.distributed as d\nd.init_process_group('nccl')\n"}))
    assert r.outlook.value == "runs_on_mac"  # the cost ladder judges the main path only (SPEC, static outlook)
    assert (r.flags, r.edits) == ([], [])
    assert {f.scope for f in r.findings} == {Scope.MAIN, Scope.DISTRIBUTED}


def test_one_subproject_does_not_condemn_a_collection(write_project):
    root = write_project({
        "projA/requirements.txt": "tinycudann\n",
        "projB/requirements.txt": "numpy\n",
        "projB/train.py": "import torch\nmodel = torch.nn.Linear(1, 1)\n",
    })
    r = scan_path(root)
    assert [(s.path, s.outlook.value) for s in r.subprojects] == [("projA", "stay_on_cuda"), ("projB", "runs_on_mac")]
    assert r.outlook.value == "mac_for_dev"
    both = write_project({"projB/requirements.txt": "nvdiffrast\n"})  # now every subproject is CUDA-only
    assert scan_path(both).outlook.value == "stay_on_cuda"


def test_warm_cache_reuses_results_and_an_edit_invalidates(write_project, tmp_path):
    root = write_project({"a.py": "import torch\nx = torch.ones(1).cuda()\n", "b.py": "y = 1\n"})
    cfg = ScanConfig(cache_dir=tmp_path / "cache")
    cold = scan_path(root, cfg)
    warm = scan_path(root, cfg)
    assert (cold.cache_hits, warm.cache_hits) == (0, 2)
    assert rows(cold) == rows(warm) == [("API101", "a.py", 2, "blocker")]
    (root / "a.py").write_text("import torch\n\nx = torch.ones(1).cuda()\n")
    edited = scan_path(root, cfg)
    assert edited.cache_hits == 1 and rows(edited) == [("API101", "a.py", 3, "blocker")]


def test_process_pool_gives_the_same_findings(write_project):
    files = {f"m{i:03d}.py": f"import torch\nx{i} = torch.ones(1).cuda()\n" for i in range(70)}
    root = write_project(files)
    serial = scan_path(root, ScanConfig(jobs=1))
    pooled = scan_path(root, ScanConfig(jobs=2))
    assert rows(serial) == rows(pooled) and len(pooled.findings) == 71  # 70 API101 and DEP110


def test_docs_rules_md_is_generated_from_the_registry():
    generated = subprocess.run([sys.executable, "-m", "mpsready.rules"], capture_output=True, text=True, check=True,
                               env={"PYTHONPATH": str(REPO / "src")}).stdout
    assert (REPO / "docs" / "rules.md").read_text(encoding="utf-8") == generated


def test_every_scan_rule_is_documented_in_full():
    # scan owns the 1xx ranges of these prefixes; trace registers DTY2xx beside them
    scan_rules = [r for r in registry.all_rules()
                  if r.prefix in ("DEP", "EXT", "API", "DTY", "INP") and r.code[3] == "1"]
    assert len(scan_rules) == 11 + 9 + 21 + 4 + 17
    for r in scan_rules:
        assert all(getattr(r, part).strip() for part in ("name", "summary", "why", "example", "fix", "source")), r.code
        assert 100 < int(r.code[3:]) < 200, r.code  # scan owns the 1xx ranges


def test_knowledge_base_has_60_entries_each_with_status_alternative_and_source():
    data = yaml.safe_load((REPO / "src/mpsready/scan/data/packages.yaml").read_text())["packages"]
    assert len(data) >= 60
    for item in data:
        assert item["status"] in ("no_macos_build", "cuda_paths_fail", "mps_since", "cuda_first", "cpu_build"), item["name"]
        assert "alternative" in item and item["source"].strip(), item["name"]
    assert knowledge.lookup("Flash_Attn").alternative.startswith("torch.nn.functional.scaled_dot_product_attention")
    assert knowledge.lookup("nvidia-cublas-cu12").name == "nvidia-cuda-runtime"
    assert knowledge.lookup_import("nvidia.dali.fn").name == "nvidia-dali"
    assert knowledge.lookup("torch") is None
    assert knowledge.lookup("tinycudann").severity is Severity.BLOCKER and knowledge.lookup("tinycudann").alternative is None


def test_single_file_and_progress_callback(write_project):
    root = write_project({"a.py": "import torch\nx = torch.ones(1).cuda()\n", "b.py": "y = 1\n"})
    seen = []
    r = scan_path(root / "a.py", progress=lambda done, total: seen.append((done, total)))
    assert rows(r) == [("API101", "a.py", 2, "blocker")] and r.files_scanned == 1
    whole = scan_path(root, progress=lambda done, total: seen.append((done, total)))
    assert whole.files_scanned == 2 and seen[-1] == (2, 2)


def test_warpctc_import_is_a_blocker_with_the_ctc_loss_alternative(write_project):
    kb = knowledge.lookup_import("warpctc_pytorch")
    assert (kb.name, kb.status, kb.severity) == ("warpctc-pytorch", "no_macos_build", Severity.BLOCKER)
    assert kb.alternative.startswith("torch.nn.CTCLoss / torch.nn.functional.ctc_loss")
    assert kb.source.startswith("https://github.com/SeanNaren/warp-ctc")
    r = scan_path(write_project({"train.py": "import torch\nfrom warpctc_pytorch import CTCLoss\n\ncrit = CTCLoss()\n"}))
    assert [(f.code, f.location.path, f.location.line, f.severity.value) for f in r.findings] == [
        ("DEP107", "train.py", 2, "blocker"), ("DEP110", ".", None, "info")]
    assert r.findings[0].evidence["package"] == "warpctc-pytorch"
    assert r.outlook.value == "mac_for_dev"  # an alternative exists: not stay_on_cuda

"""Issue 32, round 13 (dependencies): deepspeed installs and imports on macOS (its ops are JIT-built only when used),
so a module-level import on the main path is no limit; a call of its names in code the main path runs is, reported
where the call is (docs/scan.md, "round 13"). Each fixture has a look-alike that keeps the limit. Fixtures written
for these tests."""

from __future__ import annotations

from mpsready.scan import knowledge, scan_path

README = "# demo\n\n```bash\npip install -r requirements.txt\npython infer.py --device mps\n```\n"
INFER = ("import argparse\n\nimport torch\n\nfrom pkg.train import {what}\n\n\n"
         "def main():\n    p = argparse.ArgumentParser()\n    p.add_argument(\"--device\", default=\"mps\")\n"
         "    args = p.parse_args()\n    {call}\n\n\nif __name__ == \"__main__\":\n    main()\n")
# a training module the inference entry imports for one helper: deepspeed imported at module level, used in train()
TRAIN = ("import deepspeed\nimport torch\nfrom deepspeed.runtime.engine import DeepSpeedEngine\n\n\n"
         "class Engine(DeepSpeedEngine):\n    pass\n\n\n"
         "def build(device):\n    return torch.nn.Linear(4, 4).to(device)\n\n\n"
         "def train(device):\n    net = build(device)\n    engine, *_ = deepspeed.initialize(model=net)\n"
         "    return engine\n\n\n"
         "def train_with_engine(device):\n    return Engine(model=build(device))\n")


def _scan(write_project, what: str, call: str):
    return scan_path(write_project({"infer.py": INFER.format(what=what, call=call), "pkg/__init__.py": "",
                                    "pkg/train.py": TRAIN, "requirements.txt": "torch\ndeepspeed>=0.14\n",
                                    "README.md": README}))


def _ds(r):
    return sorted((f.code, f.location.path, f.location.line, f.severity.value, f.reach or "",
                   (f.evidence or {}).get("use") or "") for f in r.findings
                  if (f.evidence or {}).get("package") == "deepspeed")


def test_the_knowledge_base_records_deepspeed_as_installing_on_macos():
    entry = knowledge.lookup("deepspeed")
    assert (entry.status, entry.severity.value, entry.uses_limit) == ("cuda_paths_fail", "blocker", True)
    assert entry.source.startswith("https://www.deepspeed.ai/tutorials/advanced-install/")


def test_a_module_level_import_whose_functions_the_main_path_never_calls_is_no_limit(write_project):
    r = _scan(write_project, "build", "print(build(args.device))")
    assert _ds(r) == [
        ("DEP101", "requirements.txt", 2, "degrades", "", ""),
        ("DEP107", "pkg/train.py", 1, "degrades", "", ""),
        ("DEP107", "pkg/train.py", 6, "blocker", "off_main_path", "class Engine(DeepSpeedEngine)"),
        ("DEP107", "pkg/train.py", 16, "blocker", "off_main_path", "deepspeed.initialize"),
    ]
    [use] = [f for f in r.findings if (f.evidence or {}).get("use") == "deepspeed.initialize"]
    assert use.evidence["imported_at"] == 1
    [declared] = [f for f in r.findings if f.code == "DEP101"]
    assert declared.evidence["uses_decide"] == "pkg/train.py:1"
    assert use.message == ("uses deepspeed.initialize (deepspeed, imported at line 1): the import is harmless on "
                           "macOS, this use needs what deepspeed builds for CUDA")
    assert use.evidence["uncalled_on_path"].startswith("train() is in pkg/train.py, which the main path imports")
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_the_main_path_calls_deepspeed(write_project):
    r = _scan(write_project, "train", "print(train(args.device))")
    assert [(f.code, f.location.line, f.severity.value) for f in r.limiting] == [("DEP107", 16, "blocker")]
    [f] = r.limiting
    assert f.evidence["main_path"]["calls"] == ["infer.py:16 main", "infer.py:12 train"]
    assert f.remedy == {"kind": "swap", "what": "use plain PyTorch single-device training on MPS (keep DeepSpeed "
                                                "for the CUDA runs)"}
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_deepspeed_engine_subclass_the_main_path_builds(write_project):
    r = _scan(write_project, "train_with_engine", "print(train_with_engine(args.device))")
    assert [(f.code, f.location.line, f.evidence["use"]) for f in r.limiting] == [
        ("DEP107", 6, "class Engine(DeepSpeedEngine)")]
    assert r.outlook.value == "mac_for_dev"


def test_a_module_level_call_runs_on_import(write_project):
    train = TRAIN + "\n\ndeepspeed.init_distributed()\n"
    r = scan_path(write_project({"infer.py": INFER.format(what="build", call="print(build(args.device))"),
                                 "pkg/__init__.py": "", "pkg/train.py": train,
                                 "requirements.txt": "torch\ndeepspeed\n", "README.md": README}))
    assert [(f.code, f.location.line, f.evidence["use"]) for f in r.limiting] == [
        ("DEP107", 24, "deepspeed.init_distributed")]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_declared_and_never_imported_keeps_the_declaration(write_project):
    # a launcher or a framework's config drives it (`deepspeed infer.py`, TrainingArguments(deepspeed=...)): unseen
    plain = "import torch\n\n\ndef build(device):\n    return torch.nn.Linear(4, 4).to(device)\n"
    r = scan_path(write_project({"infer.py": INFER.format(what="build", call="print(build(args.device))"),
                                 "pkg/__init__.py": "", "pkg/train.py": plain,
                                 "requirements.txt": "torch\ndeepspeed>=0.14\n", "README.md": README}))
    assert [(f.code, f.location.path, f.location.line, f.severity.value) for f in r.limiting] == [
        ("DEP101", "requirements.txt", 2, "blocker")]
    assert r.outlook.value == "mac_for_dev"

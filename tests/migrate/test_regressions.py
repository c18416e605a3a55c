"""Bugs found while trying migrate on real projects; each one is a test."""

from mpsready.migrate.engine import migrate_path
from mpsready.scan import ScanConfig

CONFIG = ScanConfig(cache_dir=None)


def _after(tmp_path, source: str, name: str = "t.py") -> str:
    (tmp_path / name).write_text(source)
    plan = migrate_path(tmp_path, config=CONFIG)
    return plan.files[0].after if plan.files else source


def test_parenthesised_enabled_gets_no_second_pair_of_parentheses(tmp_path):
    # nanoGPT train.py: GradScaler(enabled=(dtype == 'float16')) became enabled=((dtype == 'float16')) and ...
    (tmp_path / "requirements.txt").write_text("torch>=2.8\n")
    out = _after(tmp_path, "import torch\ndevice = 'cpu'\nscaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))\n")
    assert "scaler = torch.amp.GradScaler(torch.device(device).type, enabled=(dtype == 'float16') and " \
           "torch.device(device).type != 'cpu')\n" in out


def test_below_the_floor_autocast_keeps_cuda_as_its_device_type(tmp_path):
    # torch.amp.autocast('mps', enabled=False) raises "User specified an unsupported autocast device_type 'mps'" before
    # 2.5: a floor of 2.1 keeps 'cuda' (off without CUDA, as the original), never the selected device's type
    (tmp_path / "requirements.txt").write_text("torch>=2.1\n")
    src = ("import torch\ndevice = 'cpu'\nscaler = torch.cuda.amp.GradScaler(enabled=True)\n"
           "with torch.cuda.amp.autocast(True, torch.float16):\n    pass\nwith torch.autocast('cuda'):\n    pass\n")
    assert _after(tmp_path, src) == (
        "import torch\ndevice = 'cpu'\nscaler = torch.cuda.amp.GradScaler(enabled=True)\n"
        "with torch.amp.autocast('cuda', enabled=True, dtype=torch.float16):\n    pass\n"
        "with torch.autocast('cuda'):\n    pass\n")


def test_torch_load_of_host_data_is_not_mapped_onto_the_gpu(tmp_path):
    # Pytorch-UNet utils/data_loading.py: Image.fromarray(torch.load(f).numpy()) broke on CUDA once mapped to the device
    out = _after(tmp_path, "import torch\nimg = torch.load(filename).numpy()\n")
    assert out == 'import torch\nimg = torch.load(filename, map_location=None if torch.cuda.is_available() else "cpu").numpy()\n'


def test_torch_load_keeps_the_closing_parenthesis_on_its_own_line(tmp_path):
    # PyTorch-GAN mnistm.py: the new argument landed after the newline, dedented
    out = _after(tmp_path, "import torch\ndata = torch.load(\n    path\n)\n")
    assert out == ('import torch\ndata = torch.load(\n    path, map_location=None if torch.cuda.is_available() '
                   'else "cpu"\n)\n')


def test_dependency_findings_are_not_listed_as_manual_code_work(tmp_path):
    # Pytorch-UNet: the Dockerfile's DEP106 appeared as "manual DEP106 Dockerfile:1:" with an empty reason
    (tmp_path / "requirements.txt").write_text("flash-attn\n")
    (tmp_path / "t.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [m.code for m in plan.manual] == []


def test_pin_memory_call_already_behind_a_cuda_test_is_kept(tmp_path):
    # nanoGPT train.py: x.pin_memory() inside `if device_type == 'cuda':` was listed as manual
    (tmp_path / "t.py").write_text("import torch\nif device_type == 'cuda':\n    x = x.pin_memory()\ny = y.pin_memory()\n")
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [(m.code, m.line) for m in plan.kept] == [("API113", 3)]
    assert [(m.code, m.line) for m in plan.manual] == [("API113", 4)]


def test_dot_cuda_behind_a_cuda_check_is_left_alone(tmp_path):
    # PyTorch-GAN: 121 `.cuda()` calls under `if cuda:` were rewritten although they never run on a Mac; behind the
    # availability test itself they still are left alone (no flag to follow)
    src = "import torch\nif torch.cuda.is_available():\n    model.cuda()\n"
    assert _after(tmp_path, src) == src


def test_moves_behind_a_cuda_flag_follow_the_device_selected_from_it(tmp_path):
    # the same PyTorch-GAN shape: the flag now selects CUDA, then MPS, then the CPU, and its guard moves to that device
    out = _after(tmp_path, "import torch\ncuda = torch.cuda.is_available()\nif cuda:\n    model.cuda()\n")
    assert out == ("import torch\ncuda = torch.cuda.is_available()\n"
                   'device = torch.device("cuda" if cuda else "mps" if torch.backends.mps.is_available() else "cpu")\n'
                   "if device.type != 'cpu':\n    model.to(device)\n")


def test_info_level_seed_inside_a_guard_is_not_guarded_twice(tmp_path):
    # the second run wrapped `torch.cuda.manual_seed_all` (info, so the scan marks no guard) in another if
    src = "import torch\nif torch.cuda.is_available():\n    torch.cuda.manual_seed_all(0)\n"
    assert _after(tmp_path, src) == src


def test_two_findings_of_a_rule_on_one_line_are_one_manual_entry(tmp_path):
    # nanoGPT bench.py: `x, y = x.pin_memory().to(d), y.pin_memory().to(d)` was listed twice, word for word
    (tmp_path / "t.py").write_text("import torch\nx, y = x.pin_memory().to(d), y.pin_memory().to(d)\nz = z.pin_memory()\n")
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [(m.code, m.line) for m in plan.manual] == [("API113", 2), ("API113", 3)]
    reason = "Tensor.pin_memory() raises without an accelerator: call it only when torch.cuda.is_available()"
    assert [m.reason for m in plan.manual] == [f"{reason} (2 on this line)", reason]


def test_an_entry_for_two_findings_on_one_line_counts_two_in_the_plan_effort(tmp_path):
    # nanoGPT bench.py: the plan printed "5 manual" where the scan's estimate printed 6, because the two pin_memory()
    # findings of one line, made one entry, counted as one finding
    from mpsready.migrate.fixability import plan_effort

    (tmp_path / "t.py").write_text("import torch\nx, y = x.pin_memory().to(d), y.pin_memory().to(d)\nz = z.pin_memory()\n")
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [m.count for m in plan.manual] == [2, 1]
    assert [m.to_dict()["count"] for m in plan.manual] == [2, 1]
    assert plan_effort(plan.fixed, plan.manual, plan.kept) == {"auto_fixable": 0, "manual": 3, "kept": 0,
                                                               "files_touched": 0}

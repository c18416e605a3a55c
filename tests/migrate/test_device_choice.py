"""The device selection is migrated first, and every other rewrite moves tensors to the device the code already
uses: the exact text written, and the exact reason where the tool cannot decide (never an independent choice)."""

from mpsready.migrate.engine import migrate_path
from mpsready.scan import ScanConfig

CONFIG = ScanConfig(cache_dir=None)


def _plan(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return migrate_path(tmp_path, config=CONFIG)


def _after(tmp_path, files: dict[str, str], name: str | None = None) -> str:
    plan = _plan(tmp_path, files)
    name = name or next(iter(files))
    return next((fp.after for fp in plan.files if fp.path == name), files[name])


def test_a_switch_read_by_a_selection_gives_mps_the_switch_s_own_test(tmp_path):
    # pytorch/examples mnist: use_cuda = not args.no_cuda and ...; --no-cuda must still force the CPU on a Mac
    src = ("import torch\nuse_cuda = not args.no_cuda and torch.cuda.is_available()\n"
           'device = torch.device("cuda" if use_cuda else "cpu")\nmodel = Net().cuda()\n')
    assert _after(tmp_path, {"t.py": src}) == (
        "import torch\nuse_cuda = not args.no_cuda and torch.cuda.is_available()\n"
        'device = torch.device("cuda" if use_cuda else "mps" if not args.no_cuda and torch.backends.mps.is_available() '
        'else "cpu")\nmodel = Net().to(device)\n')


def test_a_selection_with_more_statements_per_branch_gets_an_mps_branch(tmp_path):
    src = ("import torch\nif torch.cuda.is_available():\n    device = 'cuda'\n    n_gpu = torch.cuda.device_count()\n"
           "else:\n    device = 'cpu'\n    n_gpu = 0\n")
    assert _after(tmp_path, {"t.py": src}) == (
        "import torch\nif torch.cuda.is_available():\n    device = 'cuda'\n    n_gpu = torch.cuda.device_count()\n"
        "elif torch.backends.mps.is_available():\n    device = 'mps'\n    n_gpu = 0\nelse:\n    device = 'cpu'\n"
        "    n_gpu = 0\n")


def test_a_function_returning_the_device_returns_mps_before_the_cpu(tmp_path):
    src = ("import torch\n\n\ndef get_device():\n    if torch.cuda.device_count() > 0:\n        return torch.device('cuda')\n"
           "    return torch.device('cpu')\n")
    assert _after(tmp_path, {"t.py": src}) == (
        "import torch\n\n\ndef get_device():\n    if torch.cuda.device_count() > 0:\n        return torch.device('cuda')\n"
        "    elif torch.backends.mps.is_available():\n        return torch.device('mps')\n    return torch.device('cpu')\n")


def test_a_switch_guarding_cuda_calls_and_moves_together_is_left_with_the_reason(tmp_path):
    src = ("import torch\ncuda = torch.cuda.is_available()\nif cuda:\n    model.cuda()\n"
           "    torch.backends.cudnn.benchmark = torch.cuda.device_count() > 0\n")
    plan = _plan(tmp_path, {"t.py": src})
    assert plan.files == []
    assert [(m.code, m.line, m.reason) for m in plan.manual] == [
        ("API104", 2, "cuda guards .cuda() moves beside other CUDA code (line 3): split the moves from the CUDA-only "
                      "calls, then run migrate again")]


def test_a_taken_device_attribute_is_not_overwritten(tmp_path):
    src = ("import torch\nargs.cuda = torch.cuda.is_available()\nprint(args.device)\nif args.cuda:\n    model.cuda()\n")
    plan = _plan(tmp_path, {"t.py": src})
    assert plan.files == []
    assert [(m.code, m.reason) for m in plan.manual] == [
        ("API104", "args.device is already used in this file: select the device from args.cuda by hand")]


def test_a_layer_follows_its_input_and_an_is_cuda_guard_follows_it_too(tmp_path):
    src = ("import torch\nimport torch.nn as nn\n\n\nclass Gate(nn.Module):\n    def forward(self, x):\n"
           "        m = torch.ones(x.size(1)).cuda()\n        if x.is_cuda:\n            m = m.cuda()\n        return x * m\n")
    assert _after(tmp_path, {"t.py": src}) == (
        "import torch\nimport torch.nn as nn\n\n\nclass Gate(nn.Module):\n    def forward(self, x):\n"
        "        m = torch.ones(x.size(1)).to(x.device)\n        if x.device.type != 'cpu':\n            m = m.to(x.device)\n"
        "        return x * m\n")


def test_a_module_that_keeps_self_device_moves_there(tmp_path):
    src = ("import torch.nn as nn\n\n\nclass Head(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
           "        self.device = device\n\n    def reset(self):\n        self.h = torch.zeros(3).cuda()\n")
    out = _after(tmp_path, {"t.py": src})
    assert "        self.h = torch.zeros(3).to(self.device)\n" in out
    assert "_mpsready_device" not in out


def test_where_the_project_selects_its_device_code_that_cannot_see_it_is_left_with_the_place(tmp_path):
    # the old migrate wrote .to(_mpsready_device()) here: MPS on a Mac while the project's own choice could be the
    # CPU (--no-cuda, or a selection left for a person): the first MPS kernel then refuses the CPU operand
    files = {"train.py": 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() and not NO_CUDA '
                         'else "cpu")\n',
             "utils.py": "import torch\n\n\ndef make_noise(n):\n    return torch.randn(n).cuda()\n"}
    plan = _plan(tmp_path, files)
    assert [fp.path for fp in plan.files] == ["train.py"]
    assert [(m.code, m.path, m.line, m.reason) for m in plan.manual] == [
        ("API101", "utils.py", 5, "the project selects its device itself (train.py:2) and this code cannot see that "
                                  "choice: at this function no device variable is in scope, no self.device, no tensor "
                                  "operand or tensor parameter whose .device it could follow, and no module parameters; "
                                  "pass the selected device here (a parameter, or a tensor argument's .device); "
                                  "an independent choice could put this tensor on MPS while the rest stays on the CPU")]


def test_without_a_selection_of_its_own_the_helper_is_the_one_choice(tmp_path):
    out = _after(tmp_path, {"t.py": "import torch\nx = torch.randn(3).cuda()\n"})
    assert "x = torch.randn(3).to(_mpsready_device())\n" in out


def test_a_plain_function_does_not_follow_its_tensor_argument(tmp_path):
    # a preprocessing function receives CPU data to move: following x.device would keep it on the CPU under CUDA
    out = _after(tmp_path, {"t.py": "import torch\n\n\ndef prep(x):\n    return (x.float() / 255).cuda()\n"})
    assert "    return (x.float() / 255).to(_mpsready_device())\n" in out


def test_a_device_keyword_or_attribute_does_not_make_the_name_device_taken(tmp_path):
    src = ("import torch\nuse_cuda = torch.cuda.is_available()\nz = torch.zeros(1, device=x.device)\n"
           "if use_cuda:\n    model.cuda()\n")
    assert _after(tmp_path, {"t.py": src}) == (
        "import torch\nuse_cuda = torch.cuda.is_available()\n"
        'device = torch.device("cuda" if use_cuda else "mps" if torch.backends.mps.is_available() else "cpu")\n'
        "z = torch.zeros(1, device=x.device)\nif device.type != 'cpu':\n    model.to(device)\n")


def test_a_device_variable_already_bound_is_not_overwritten(tmp_path):
    src = ("import torch\nuse_cuda = torch.cuda.is_available()\ndevice = pick()\nif use_cuda:\n    model.cuda()\n")
    plan = _plan(tmp_path, {"t.py": src})
    assert [(m.code, m.reason) for m in plan.manual] == [
        ("API104", "device is already used in this file: select the device from use_cuda by hand")]


def test_a_device_parameter_default_takes_the_helper_where_no_selection_disagrees(tmp_path):
    # TRELLIS: `def construct_dense_grid(res, device='cuda')` and `__init__(self, ..., device='cuda')` were manual
    # ("None='cuda': a keyword of another library") while the scan's estimate counted them auto-fixable
    src = "import torch\n\n\ndef grid(res, device='cuda'):\n    return torch.zeros(res, device=device)\n"
    out = _after(tmp_path, {"t.py": src})
    assert out.count("def _mpsready_device(") == 1
    assert out.endswith("\n\ndef grid(res, device=str(_mpsready_device())):\n    return torch.zeros(res, device=device)\n")


def test_a_device_parameter_default_is_manual_where_the_project_selects_its_device(tmp_path):
    files = {"train.py": 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() and not NO_CUDA '
                         'else "cpu")\n',
             "utils.py": "import torch\n\n\ndef grid(res, device='cuda'):\n    return torch.zeros(res, device=device)\n"}
    plan = _plan(tmp_path, files)
    assert [(m.code, m.path, m.line, m.reason) for m in plan.manual] == [
        ("API103", "utils.py", 4, "parameter device defaults to 'cuda': the project selects its device itself "
                                  "(train.py:2) and a default cannot see that choice; pass the selected device from "
                                  "every caller and drop the default")]


def test_an_is_cuda_guard_of_a_move_to_the_tested_tensor_s_index_follows_it(tmp_path):
    # 2d-gaussian-splatting, TRELLIS (ssim): `if img1.is_cuda: window = window.cuda(img1.get_device())` was kept as
    # it is (the tensor stayed on the CPU on a Mac) while the estimate counted it fixed
    src = ("import torch\n\n\ndef ssim(img1, window):\n    if img1.is_cuda:\n"
           "        window = window.cuda(img1.get_device())\n    return window.type_as(img1)\n")
    assert _after(tmp_path, {"t.py": src}) == (
        "import torch\n\n\ndef ssim(img1, window):\n    if img1.device.type != 'cpu':\n"
        "        window = window.to(img1.device)\n    return window.type_as(img1)\n")
    other = src.replace("window.cuda(img1.get_device())", "window.cuda(img2.get_device())")
    assert _after(tmp_path / "o", {"t.py": other}) == other if (tmp_path / "o").mkdir() is None else False


def test_cuda_amp_imported_under_its_own_name_is_migrated(tmp_path):
    # VM-UNet: `from torch.cuda.amp import autocast as autocast` was manual ("imported under another name")
    src = "import torch\nfrom torch.cuda.amp import autocast as autocast\n\nwith autocast():\n    pass\n"
    out = _after(tmp_path, {"t.py": src})
    assert "from torch.amp import autocast as autocast\n" in out
    assert "with autocast('cuda'):\n" in out

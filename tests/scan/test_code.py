"""CUDA-only APIs, dtypes and device handling from the syntax tree (fixture project `code`)."""

from mpsready.scan.code import analyze_source
from tests.scan.conftest import rows


def test_code_fixture_exact_findings(scan_fixture):
    r = scan_fixture("code")
    assert rows(r, with_scope=True) == [
        ("API103", "configs.py", 4, "blocker", "main"),  # def load_model(name, device="cuda")
        ("API103", "configs.py", 9, "blocker", "main"),  # add_argument("--device", default="cuda")
        ("API101", "distributed/launch.py", 3, "blocker", "distributed"),
        ("API101", "tests/test_model.py", 5, "blocker", "tests"),
        ("API101", "train.py", 9, "blocker", "main"),  # .cuda()
        ("API102", "train.py", 10, "blocker", "main"),  # th.cuda.synchronize() through `import torch as th`
        ("API103", "train.py", 12, "blocker", "main"),  # device="cuda:1"
        ("API103", "train.py", 13, "blocker", "main"),  # .to("cuda")
        ("API103", "train.py", 14, "blocker", "main"),  # torch.device("cuda", 0)
        ("API107", "train.py", 17, "blocker", "main"),  # init_process_group(backend="nccl")
        ("API110", "train.py", 21, "blocker", "main"),  # CUDAGraph
        ("API111", "train.py", 22, "blocker", "main"),  # nvtx
        ("API112", "train.py", 23, "blocker", "main"),  # Event(enable_timing=True)
        ("DTY102", "train.py", 29, "blocker", "main"),  # from_numpy(np.random.rand(...)).to(device)
        ("API115", "configs.py", 10, "degrades", "main"),  # 'cuda' if 'cuda' in ... else 'cpu'
        ("API104", "train.py", 8, "degrades", "main"),  # cuda if available else cpu
        ("API108", "train.py", 18, "degrades", "main"),  # autocast from torch.cuda.amp
        ("API108", "train.py", 20, "degrades", "main"),  # GradScaler from torch.cuda.amp
        ("DTY103", "train.py", 31, "degrades", "main"),
        ("DTY104", "train.py", 32, "degrades", "main"),
        ("API102", "train.py", 11, "info", "main"),  # cuda.empty_cache() through `from torch import cuda`
        ("API105", "train.py", 15, "info", "main"),
        ("API106", "train.py", 16, "info", "main"),
        ("API113", "train.py", 24, "info", "main"),
        ("API114", "train.py", 25, "info", "main"),
        ("DTY101", "train.py", 26, "info", "main"),  # dtype=torch.float64 without device=: a CPU tensor
        ("DTY101", "train.py", 27, "info", "main"),  # .double() of that CPU tensor
        ("API101", "train.py", 34, "info", "main"),  # .cuda() under `if torch.cuda.is_available():`
    ]
    # line 30 casts before the move (no DTY102); line 35 is suppressed inline; portable.py is clean
    assert r.suppressed == 1
    assert not [f for f in r.findings if f.location.path == "portable.py"]


def test_torch_cuda_mapping_names_mps_and_accelerator_equivalents(scan_fixture):
    r = scan_fixture("code")
    sync = next(f for f in r.findings if f.code == "API102" and f.location.line == 10)
    assert sync.output_evidence() == {"api": "torch.cuda.synchronize", "mps": "torch.mps.synchronize()",
                             "accelerator": "torch.accelerator.synchronize()",
                             "remedy": {"kind": "edit", "migrate": True},
                             "main_path": {"entry": "train.py", "chain": ["train.py"], "facts": []}}  # issue 32
    assert sync.fix == "Use torch.mps.synchronize() or torch.accelerator.synchronize()."
    guarded = next(f for f in r.findings if f.location.line == 34)
    assert guarded.output_evidence() == {"guarded": True}


def codes(src: str) -> list[tuple[str, int, str]]:
    return [(f["code"], f["line"], f["severity"]) for f in analyze_source(src).findings]


def test_alias_resolution_variants():
    assert codes("import torch.cuda as tc\ntc.synchronize()\n") == [("API102", 2, "blocker")]
    assert codes("from torch.cuda import synchronize as sync\nsync()\n") == [("API102", 2, "blocker")]
    assert codes("import torch\nimport torch.cuda\ntorch.cuda.set_device(0)\n") == [("API102", 3, "blocker")]
    # an unrelated object with a .cuda attribute chain is not torch.cuda
    assert codes("class A: pass\na = A()\na.cuda.synchronize()\n") == []


def test_device_literal_through_a_variable():
    src = "import torch\nloader_default = 'cuda'\nnet = torch.nn.Linear(2, 2)\nnet = net.to(device=loader_default)\n"
    found = analyze_source(src).findings
    assert [(f["code"], f["line"]) for f in found] == [("API103", 4)]
    assert "assigned at line 2" in found[0]["message"]


def test_nccl_backend_from_a_variable_and_gloo_is_fine():
    src = "import torch.distributed as dist\nbackend = 'nccl'\ndist.init_process_group(backend=backend)\n"
    assert codes(src) == [("API107", 3, "blocker")]
    assert codes("import torch.distributed as dist\ndist.init_process_group('gloo')\n") == []


def test_autocast_and_gradscaler_device_types():
    assert codes("import torch\nwith torch.autocast(device_type='cuda'):\n    pass\n") == [("API108", 2, "degrades")]
    assert codes("import torch\ns = torch.amp.GradScaler('cuda')\n") == [("API108", 2, "degrades")]
    assert codes("import torch\ns = torch.amp.GradScaler()\n") == [("API109", 2, "info")]
    assert codes("import torch\ns = torch.amp.GradScaler('mps')\n") == []


def test_if_statement_device_selection_and_mps_aware_variant():
    src = "import torch\nif torch.cuda.is_available():\n    d = 'cuda'\nelse:\n    d = 'cpu'\n"
    assert codes(src) == [("API104", 2, "degrades")]
    mps = src + "if torch.backends.mps.is_available():\n    d = 'mps'\n"
    assert codes(mps) == []


def test_suppression_comment_parsing_is_token_based():
    res = analyze_source("import torch\nx = torch.ones(1).cuda()  # mpsready: ignore[API101, DTY101]\ns = '# mpsready: ignore'\n")
    assert res.suppress == {"2": ["API101", "DTY101"]}  # the string on line 3 is not a comment


def test_device_selection_variants():
    base = "import torch\n"
    assert codes(base + "d = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n") == [("API104", 2, "degrades")]
    assert codes(base + "d = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')\n") == [
        ("API104", 2, "degrades")]
    assert codes(base + "d = 'cuda' if torch.cuda.device_count() > 0 else 'cpu'\n") == [("API104", 2, "degrades")]
    # a function that considers MPS is fine even if the module also has a cuda-or-cpu default elsewhere
    assert codes(base + "def pick():\n    if torch.backends.mps.is_available():\n        return 'mps'\n"
                        "    return 'cuda' if torch.cuda.is_available() else 'cpu'\n") == []

"""Issue 32, fifth round: general causes found on the tune half of a new set of hand-labelled repositories
(2026-12, 42 repositories). Each rule has a look-alike negative. The fixtures are written for these tests and copy
no repository."""

from __future__ import annotations

from mpsready.scan import scan_path

TORCH = "import torch\n"
REQS = {"requirements.txt": "torch\n"}


def _limits(r):
    return [(f.code, f.location.path, f.location.line, f.severity.value) for f in r.findings
            if f.code.startswith(("API", "DTY", "DEP")) and f.severity.value != "info"]


# ---------------------------------------------------------------- a list of GPU ids read through a subscript
def _gpu_ids(default: str) -> str:
    return TORCH + "import argparse\n\n\ndef parse():\n    p = argparse.ArgumentParser()\n" \
        f"    p.add_argument('--device', type=int, nargs='+', default={default}, help='GPU ids, -1 for none')\n" \
        "    return p.parse_args()\n\n\nif __name__ == '__main__':\n    args = parse()\n" \
        "    if args.device[0] != -1:\n        device = f'cuda:{args.device[0]}'\n" \
        "    elif torch.backends.mps.is_available():\n        device = 'mps'\n    else:\n        device = 'cpu'\n" \
        "    print(torch.zeros(2).to(device))\n"


def test_a_gpu_id_list_defaulting_to_none_never_enters_the_cuda_branch(write_project):
    r = scan_path(write_project({"train.py": _gpu_ids("[-1]"), **REQS}))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.code == "API103"]
    assert f.severity.value == "info"
    assert f.evidence["mac_never"]["test"] == "args.device[0] != -1"
    assert f.evidence["mac_never"]["facts"] == ["--device defaults to [-1] (GPU ids: a Mac names none)"]


def test_a_gpu_id_list_defaulting_to_gpu_zero_enters_the_cuda_branch(write_project):
    # look-alike: the default names GPU 0, so the default command takes the CUDA branch on a Mac too
    r = scan_path(write_project({"train.py": _gpu_ids("[0]"), **REQS}))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API103", "train.py", 14, "blocker")]


# ---------------------------------------------------------------- a 0-dim scalar's CUDA-or-CPU device
def _scalar(call: str) -> str:
    return TORCH + "\n\ndef grad_norm(module):\n    norms = [p.grad.norm() for p in module.parameters() if p.grad is not None]\n" \
        f"    if not norms:\n        return {call}\n    return torch.stack(norms).sum()\n\n\n" \
        "if __name__ == '__main__':\n    device = 'mps' if torch.backends.mps.is_available() else 'cpu'\n" \
        "    print(grad_norm(torch.nn.Linear(2, 2).to(device)))\n"


def test_a_zero_dim_scalar_made_on_cuda_or_cpu_is_no_limit(write_project):
    for call, creation in (("torch.tensor(0.0, device='cuda' if torch.cuda.is_available() else 'cpu')", "torch.tensor"),
                           ("torch.zeros((), device='cuda' if torch.cuda.is_available() else 'cpu')", "torch.zeros")):
        r = scan_path(write_project({"train.py": _scalar(call), **REQS}))
        assert (r.outlook.value, _limits(r)) == ("runs_on_mac", []), call
        [f] = [f for f in r.findings if f.code == "API104"]
        assert (f.severity.value, f.location.line, f.evidence["scalar_creation"]) == ("info", 7, creation)


def test_a_buffer_made_on_cuda_or_cpu_keeps_the_mac_on_the_cpu(write_project):
    # look-alike: a tensor with a shape (not a 0-dim scalar) on the CPU beside MPS tensors is the silent-CPU limit
    r = scan_path(write_project({"train.py": _scalar("torch.zeros(3, device='cuda' if torch.cuda.is_available() "
                                                     "else 'cpu')"), **REQS}))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API104", "train.py", 7, "degrades")]

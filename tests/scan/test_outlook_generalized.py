"""The static outlook on projects nobody here has read (issue 23): each general rule with a small fixture that
copies no repository, and its look-alike negatives. Every test asserts the exact verdict, flags and edits."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import rows

TORCH = "import torch\n"
ARGS = "import argparse\np = argparse.ArgumentParser()\n"


def outlook(r):
    """(verdict, flags, [(path, line, code, kind)]) of a scan result."""
    return (r.outlook.value, r.flags, [(e.path, e.line, e.code, e.kind) for e in r.edits])


# ---------------------------------------------------------------- 3. device flags are flags about devices
def test_single_dash_device_option_with_mps_among_its_choices_is_the_flag(write_project):
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('-device', default='cuda', choices=['cuda', 'cpu', 'mps'])\nargs = p.parse_args()\n"
        "model = torch.nn.Linear(2, 2).to(args.device)\n")}))
    assert rows(r) == [("API103", "train.py", 4, "blocker")]
    assert outlook(r) == ("runs_on_mac", ["-device mps"], [])


def test_an_option_whose_value_flows_into_torch_device_is_a_device_flag(write_project):
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('--where', default='cuda')\nargs = p.parse_args()\n"
        "dev = torch.device(args.where)\nmodel = torch.nn.Linear(2, 2).to(dev)\n")}))
    assert outlook(r) == ("runs_on_mac", ["--where mps"], [])


def test_a_batch_size_per_device_is_no_device_flag(write_project):
    # a project that uses MPS only when asked (`--device mps`) has a device option; the per-device batch size
    # beside it, default None or a number, is not one: no `--device-batch-size mps` is printed
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('--device', default='')\n"
        "p.add_argument('--device-batch-size', default=None)\n"
        "p.add_argument('--device_batch_size_eval', type=int, default=32)\n"
        "p.add_argument('--devices', default=1)\n"
        "args = p.parse_args()\n"
        "dev = 'mps' if args.device == 'mps' else ('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = torch.nn.Linear(2, 2).to(dev)\n")}))
    assert r.flags == ["--device mps"]
    assert r.outlook.value == "runs_on_mac"

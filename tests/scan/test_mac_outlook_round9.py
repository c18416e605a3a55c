"""Issue 32, round 9: the classes of ``runs_on_mac`` projects the outlook called ``mac_for_dev`` (the census in
docs/scan.md, "Round 9"), each fixed by a general rule with a fixture and a look-alike that keeps its old verdict.
Fixtures written for these tests."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import rows

# ---------------------------------------------------------------- a module's own definition shadows a `*` import
UTILS = ("import torch\n\n\ndef setup_seed(seed):\n    torch.manual_seed(seed)\n\n\n"
         "def init_model(width, device=\"cuda\"):\n    model = torch.nn.Linear(width, width)\n"
         "    return model.to(device)\n")
TRAIN = ("import argparse\n\nimport torch\n\nfrom utils import init_model, setup_seed\n\n"
         "parser = argparse.ArgumentParser()\n"
         "parser.add_argument(\"--device\", default=\"cpu\", choices=[\"cpu\", \"mps\", \"cuda\"])\n"
         "args = parser.parse_args()\nsetup_seed(0)\nmodel = init_model(8, device=args.device)\n"
         "print(model(torch.zeros(1, 8, device=args.device)))\n")
README = "# demo\n\n```bash\npip install -r requirements.txt\npython train.py\npython evaluate.py\n```\n"


def _evaluate(own_def: bool) -> str:
    head = "import argparse\n\nfrom utils import *\n\n\n"
    own = "def init_model(opts):\n    return opts.width\n\n\n" if own_def else ""
    call = "init_model(parser.parse_args())" if own_def else "init_model(8)"
    return (head + own + "if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument(\"--width\", type=int, default=8)\n    setup_seed(0)\n"
            f"    print({call})\n")


def _project(write_project, own_def: bool):
    return scan_path(write_project({"utils.py": UTILS, "train.py": TRAIN, "evaluate.py": _evaluate(own_def),
                                    "README.md": README, "requirements.txt": "torch\n"}))


def test_a_same_named_function_of_the_calling_module_is_not_a_call_of_the_imported_one(write_project):
    # evaluate.py brings utils' names with `*` and defines its own init_model(opts): its bare call is of that
    # definition; the one call of utils.init_model (train.py) passes the device, so the 'cuda' default never runs
    r = _project(write_project, own_def=True)
    assert rows(r) == [("API103", "utils.py", 8, "info")]
    assert r.findings[0].evidence["default_unused"] == ["train.py:11"]
    assert r.outlook.value == "runs_on_mac"
    assert r.flags == ["--device mps"]


def test_a_star_import_call_that_omits_the_device_still_uses_the_default(write_project):
    # look-alike: evaluate.py has no init_model of its own; its `init_model(8)` is utils' and omits the device
    r = _project(write_project, own_def=False)
    assert rows(r) == [("API103", "utils.py", 8, "blocker")]
    assert r.outlook.value == "mac_for_dev"

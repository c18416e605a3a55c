"""Per-rule units that judged real repositories wrongly (hand-judged against six projects): one positive and
one look-alike negative per fix, each with its exact findings and static outlook."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import rows

TORCH = "import torch\n"
SPARSE = TORCH + (
    "class Heads(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.register_buffer('heads', torch.eye(4).to_sparse(), persistent=False)\n"
    "if __name__ == '__main__':\n"
    "    dev = 'mps' if torch.backends.mps.is_available() else 'cpu'\n"
    "    Heads().to(dev)\n")


def outlook(r):
    """(verdict, flags, [(path, line, code, kind, remedy)]) of a scan result."""
    return (r.outlook.value, r.flags, [(e.path, e.line, e.code, e.kind, e.migrate) for e in r.edits])


def remedy(r, code):
    return next(f.evidence.get("remedy") for f in r.findings if f.code == code)


# ---------------------------------------------------------------- API118: the torch pin decides
def test_sparse_buffer_with_a_pin_below_2_9_is_a_pin_raise(write_project):
    r = scan_path(write_project({"requirements.txt": "torch==2.3.1\n", "main.py": SPARSE}))
    assert rows(r) == [("API118", "main.py", 5, "blocker")]
    assert outlook(r) == ("mac_for_dev", [], [("main.py", 5, "API118", "swap", False)])
    assert remedy(r, "API118") == {"kind": "swap", "what": "raise the torch pin to >= 2.9 (requirements.txt:1)"}
    f = r.findings[0]
    assert f.evidence["torch_pin"] == "==2.3.1" and f.evidence["raise_torch_to"] == "2.9"
    assert f.fix.startswith("Raise the torch pin to torch>=2.9")


def test_sparse_buffer_with_an_unpinned_torch_needs_only_a_recent_release(write_project):
    r = scan_path(write_project({"requirements.txt": "torch\n", "main.py": SPARSE}))
    assert rows(r) == [("API118", "main.py", 5, "degrades")]
    assert outlook(r) == ("runs_on_mac", [], [])
    assert r.findings[0].message.endswith("needs PyTorch >= 2.9 on a Mac")
    assert "remedy" not in r.findings[0].evidence


def test_sparse_buffer_with_a_pin_that_admits_2_9(write_project):
    r = scan_path(write_project({"pyproject.toml": "[project]\nname = 'p'\nversion = '0'\n"
                                                   "dependencies = ['torch>=2.1,<3']\n", "main.py": SPARSE}))
    assert rows(r) == [("API118", "main.py", 5, "degrades")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_sparse_buffer_without_any_declaration_needs_a_recent_release(write_project):
    r = scan_path(write_project({"main.py": SPARSE}))
    assert rows(r) == [("API118", "main.py", 5, "degrades")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_sparse_buffer_when_one_declaration_pins_below_2_9(write_project):
    # requirements.txt leaves torch open, the conda environment pins 2.3: the older pin decides
    r = scan_path(write_project({"requirements.txt": "torch\n", "environment.yml":
                                 "name: x\ndependencies:\n  - pytorch=2.3\n", "main.py": SPARSE}))
    assert [x for x in rows(r) if x[0] == "API118"] == [("API118", "main.py", 5, "blocker")]
    assert remedy(r, "API118") == {"kind": "swap", "what": "raise the torch pin to >= 2.9 (environment.yml:3)"}

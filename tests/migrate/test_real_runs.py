"""Bugs found running migrated research projects on the emulated Mac (issue 35, round 3); each one is a test with a
fixture of our own."""

from mpsready.migrate.engine import migrate_path
from mpsready.scan import ScanConfig

CONFIG = ScanConfig(cache_dir=None)


def _plan(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return migrate_path(tmp_path, config=CONFIG)


def _after(plan, name: str) -> str:
    return next(f.after for f in plan.files if f.path == name)


LAYER = '''import torch
import torch.nn as nn


class SparseAttention(nn.Module):
    def forward(self, input, adj):
        dv = 'cuda' if input.is_cuda else 'cpu'
        ones = torch.ones(size=(input.shape[0], 1), device=dv)
        other = 'cuda' if input.is_cuda else 'cuda:1'
        flag = input.is_cuda and adj.is_cuda
        return ones, other, flag
'''


def test_a_device_named_from_is_cuda_follows_the_tensor(tmp_path):
    # pyGAT layers.py (SpGraphAttentionLayer): dv = 'cuda' if input.is_cuda else 'cpu' made torch.ones(..., device=dv)
    # a CPU tensor beside MPS operands; the emulated Mac failed at the sparse matmul ("Placeholder storage has not
    # been allocated on MPS device!") after migrate had moved everything else to MPS. No scan rule reports it.
    plan = _plan(tmp_path, {"layers.py": LAYER})
    assert _after(plan, "layers.py") == LAYER.replace("dv = 'cuda' if input.is_cuda else 'cpu'", "dv = input.device.type")
    [edit] = [e for f in plan.files for e in f.edits]
    assert (edit.code, edit.line, edit.review) == ("API115", 7, None)
    assert plan.fixed == []  # no scan finding: found by the transform itself
    assert edit.what == "'cuda' if x.is_cuda else 'cpu' -> x.device.type ('cpu' for an MPS tensor before)"


def test_the_is_cuda_rewrite_is_a_fixed_point(tmp_path):
    plan = _plan(tmp_path, {"layers.py": LAYER})
    (tmp_path / "layers.py").write_text(_after(plan, "layers.py"))
    again = migrate_path(tmp_path, config=CONFIG)
    assert (again.edits, again.files) == (0, [])


def test_the_is_cuda_test_beside_autocast_below_the_floor_is_left_with_its_reason(tmp_path):
    # autocast keyed on the value would turn on on MPS: the same rule as the string test (API115) below the floor
    src = ("import torch\n\n\ndef step(x):\n    dv = 'cuda' if x.is_cuda else 'cpu'\n"
           "    with torch.autocast(dv):\n        return x * 2\n")
    plan = _plan(tmp_path, {"t.py": src})
    assert [e.code for f in plan.files for e in f.edits if e.code == "API115"] == []
    [m] = [m for m in plan.manual if m.code == "API115"]
    assert (m.path, m.line) == ("t.py", 5)
    assert m.reason.startswith("'cuda' if ....is_cuda else 'cpu' gives 'cpu' for an MPS tensor; left as it is, to "
                                  "keep the Mac path: .device.type would turn on autocast on MPS, which needs PyTorch 2.5.1")

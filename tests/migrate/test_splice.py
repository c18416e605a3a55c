"""The new text of an edited file is spliced from the index's tokens (:mod:`mpsready.migrate.splice`): it must
equal libcst's ``Module.code`` of the edited tree byte for byte, and fall back to it where it cannot be sure."""

from pathlib import Path

import pytest

import mpsready.migrate.source as source
from mpsready.migrate.engine import migrate_path

HERE = Path(__file__).parent


@pytest.fixture
def compared(monkeypatch):
    """Each splice of the run, compared with ``Module.code``: counts of 'same', 'fallback' and 'differs'."""
    seen = {"same": 0, "fallback": 0, "differs": 0}
    real = source.spliced

    def both(final, *args):
        out = real(final, *args)
        seen["fallback" if out is None else "same" if out == final.code else "differs"] += 1
        return out

    monkeypatch.setattr(source, "spliced", both)
    return seen


@pytest.mark.parametrize("path", sorted(p.name for p in (HERE / "fixtures").iterdir())
                         + [f"../projects/{p.name}" for p in sorted((HERE / "projects").iterdir())])
def test_every_fixture_and_project_splices_as_libcst_writes(path, compared):
    plan = migrate_path(HERE / "fixtures" / path)
    assert compared["differs"] == 0
    # one splice per edited file or notebook cell (a cell has no trailing newline: Module.code writes it)
    assert (compared["same"] + compared["fallback"] > 0) == bool(plan.files)
    if path.endswith(".py"):
        assert compared["fallback"] == 0


NESTED = (
    "# header comment\r\n"
    "import os\r\n"
    "\r\n"
    "# about the class\r\n"
    "class Net:\r\n"
    "\tdef forward(self, x):\r\n"
    "\t\tif x:\r\n"
    "\t\t\ty = x.cuda()  # keep\r\n"
    "\t\tfor i in range(3):\r\n"
    "\t\t\tz = (\r\n"
    "\t\t\t    x.cuda()\r\n"
    "\t\t\t)\r\n"
    "\t\treturn x.cuda()\r\n"
    "\r\n"
    "torch.cuda.synchronize()\r\n"
    "w = 1\r\n"
    "# footer\r\n"
)


def test_a_tree_with_nested_edits_splices_exactly(tmp_path, compared):
    (tmp_path / "net.py").write_bytes(NESTED.encode())
    plan = migrate_path(tmp_path)
    after = plan.files[0].after
    # three rounds: the first adds `import torch`, so the second sees `torch.cuda.synchronize()` (the scan reports
    # it only where torch is imported) and guards it; the third changes nothing
    assert plan.rounds == 3
    assert compared == {"same": 2, "fallback": 0, "differs": 0}
    assert "\t\t\ty = x.to(_mpsready_device())  # keep\r\n" in after
    assert "\t\treturn x.to(_mpsready_device())\r\n" in after
    assert after.endswith("w = 1\r\n# footer\r\n")


def test_a_module_without_a_trailing_newline_falls_back(tmp_path, compared):
    (tmp_path / "t.py").write_text("import torch\nx = torch.ones(1).cuda()")
    plan = migrate_path(tmp_path)
    assert compared == {"same": 0, "fallback": 1, "differs": 0}
    assert plan.files[0].after.endswith("x = torch.ones(1).to(_mpsready_device())")

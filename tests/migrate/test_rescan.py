"""After ``migrate --apply``, a re-scan reports exactly what migrate left, under the same codes: no finding the
estimate calls auto-fixable is left, and the findings it calls manual are the second plan's manual entries, one
for one (code, file, line). Over every transform fixture and every research-style project."""

import shutil
from collections import Counter
from pathlib import Path

import pytest

from mpsready.migrate.apply import apply_plan
from mpsready.migrate.fixability import bucket
from mpsready.migrate.engine import migrate_path
from mpsready.scan import ScanConfig
from mpsready.scan.engine import scan_path

HERE = Path(__file__).parent
CASES = sorted([f"fixtures/{p.name}" for p in (HERE / "fixtures").iterdir() if p.suffix in (".py", ".ipynb")
                or p.is_dir()] + [f"projects/{p.name}" for p in (HERE / "projects").iterdir() if p.is_dir()])
CONFIG = ScanConfig(cache_dir=None)


def _migrated(case: str, tmp_path: Path) -> Path:
    src = HERE / case
    dst = tmp_path / src.name
    (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    apply_plan(migrate_path(dst, config=CONFIG))
    return dst


@pytest.mark.parametrize("case", CASES)
def test_the_rescan_reports_what_migrate_left_under_the_same_codes(case, tmp_path):
    target = _migrated(case, tmp_path)
    rescan = scan_path(target, CONFIG)
    kinds = [(f, bucket(f, rescan.torch_floor)[0]) for f in rescan.findings]
    assert [(f.code, f.location.line) for f, kind in kinds if kind == "auto"] == []
    left = Counter((f.code, f.location.path, f.location.line) for f, kind in kinds if kind == "manual")
    again = migrate_path(target, config=CONFIG)
    assert again.edits == 0
    assert left == Counter((m.code, m.path, m.line) for m in again.manual)


def test_a_selection_left_as_it_was_stays_reported_beside_the_helper(tmp_path):
    # the helper migrate adds mentions MPS; counting it as the file's own choice hid this selection from the re-scan
    (tmp_path / "t.py").write_text(
        "import torch\n\n\ndef _mpsready_device(index=None):\n    if torch.cuda.is_available():\n"
        "        return torch.device('cuda')\n    if torch.backends.mps.is_available():\n        return torch.device('mps')\n"
        "    return torch.device('cpu')\n\n\nif torch.cuda.is_available():\n    device = torch.device('cuda')\n"
        "else:\n    device = torch.device('cpu')\n")
    assert [(f.code, f.location.line) for f in scan_path(tmp_path, CONFIG).findings if f.code == "API104"] == [
        ("API104", 12)]

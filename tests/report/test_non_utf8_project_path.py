"""A project folder whose name is not UTF-8 (builder h40b, 2026-12-07): scan, migrate, kit and check ended with
an internal error (exit 3, UnicodeEncodeError: surrogates not allowed) in the scan cache key, the stored migrate
plan's key, the kit's MANIFEST.md and the report files. The name is shown and written as its escape."""
from __future__ import annotations

import json
import os

import pytest

from mpsready.cli import main

pytestmark = pytest.mark.skipif(os.name != "posix", reason="bytes file names are a POSIX matter")


@pytest.fixture
def proj(tmp_path):
    p = tmp_path / os.fsdecode(b"p\xff")
    p.mkdir()
    (p / "step.py").write_text("import torch\n\ndef step():\n    return torch.zeros(1).cuda()\n")
    return p


def test_scan_and_migrate_read_it(proj, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["scan", str(proj), "--cache-dir", str(cache), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in doc["findings"]] == ["API101", "DEP110"]
    assert main(["migrate", str(proj), "--cache-dir", str(cache)]) == 0
    assert "+    return torch.zeros(1).to(_mpsready_device())\n" in capsys.readouterr().out


def test_kit_and_check_write_it(proj, tmp_path, capsys):
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(tmp_path / "kit"), "--torch", "2.5.1"]) == 0
    assert "# What leaves the lab: kit of p\\udcff\n" in (tmp_path / "kit" / "MANIFEST.md").read_text()
    assert main(["check", str(proj), "--skip-record", "--out", str(tmp_path / "out")]) == 1
    assert json.loads((tmp_path / "out" / "report.json").read_text())["schema"] == {"name": "mpsready.report", "version": 1}

"""Bad input never aborts a scan: each kind becomes an exact INP finding, and the rest is still scanned."""

import os
from pathlib import Path

import pytest

from mpsready.errors import UsageError
from mpsready.scan import ScanConfig, scan_path
from tests.scan.conftest import rows

GOOD = "import torch\nx = torch.ones(1).cuda()\n"  # one API101 at line 2: proves the rest was scanned


def test_malformed_requirement_lines(write_project):
    root = write_project({"requirements.txt": "numpy\ntorch>=>2\n===\nflash-attn\n", "ok.py": GOOD})
    assert rows(scan_path(root)) == [
        ("API101", "ok.py", 2, "blocker"),
        ("DEP101", "requirements.txt", 4, "blocker"),
        ("INP107", "requirements.txt", 2, "info"),
        ("INP107", "requirements.txt", 3, "info"),
    ]


def test_broken_toml_and_yaml(write_project):
    root = write_project({
        "pyproject.toml": "[project]\nname = 'x'\ndependencies = [\n",
        "environment.yml": "name: x\ndependencies:\n  - pytorch\n  - [unclosed\n",
        "Pipfile": "[packages\n",
        "ok.py": GOOD,
    })
    r = scan_path(root)
    assert rows(r) == [
        ("API101", "ok.py", 2, "blocker"),
        ("INP108", "Pipfile", 1, "info"),
        ("INP109", "environment.yml", 5, "info"),
        ("INP108", "pyproject.toml", 3, "info"),  # "at end of document": the last line
    ]


def test_python2_and_syntax_errors(write_project):
    root = write_project({
        "old.py": "import os\nprint 'hello'\n",
        "old_except.py": "try:\n    pass\nexcept ValueError, e:\n    pass\n",
        "broken.py": "def f(:\n    pass\n",
        "ok.py": GOOD,
    })
    assert rows(scan_path(root)) == [
        ("API101", "ok.py", 2, "blocker"),
        ("INP105", "broken.py", 1, "info"),
        ("INP106", "old.py", 2, "info"),
        ("INP106", "old_except.py", 3, "info"),
    ]


def test_odd_notebooks(write_project):
    root = write_project({
        "notjson.ipynb": "{cells: [}",
        "nocells.ipynb": '{"cells": 3}',
        "badcell.ipynb": '{"cells": [{"cell_type": "code", "source": 42}]}',
        "syntax.ipynb": '{"cells": [{"cell_type": "code", "source": ["x = (\\n"]}, '
                        '{"cell_type": "code", "source": ["import torch\\n", "torch.ones(1).cuda()\\n"]}]}',
        "ok.py": GOOD,
    })
    r = scan_path(root)
    assert rows(r) == [
        ("API101", "ok.py", 2, "blocker"),
        ("API101", "syntax.ipynb", 1, "blocker"),  # cell 2 still analysed after cell 1 failed (one-line file)
        ("INP110", "badcell.ipynb", None, "info"),
        ("INP110", "nocells.ipynb", None, "info"),
        ("INP110", "notjson.ipynb", None, "info"),
        ("INP105", "syntax.ipynb", 1, "info"),
    ]
    assert [(f.evidence["cell"], f.evidence["cell_line"]) for f in r.findings
            if f.location.path == "syntax.ipynb"] == [(2, 2), (1, 1)]


def test_non_utf8_and_binary_files(write_project):
    root = write_project({
        "requirements.txt": "torch\nna\xefve\n".encode("latin-1"),
        "latin.py": "s = 'caf\xe9'\n".encode("latin-1"),
        "declared.py": "# -*- coding: latin-1 -*-\nimport torch\ns = 'caf\xe9'\nx = torch.ones(1).cuda()\n".encode("latin-1"),
        "blob.py": b"\x00\x01\x02binary",
        "ok.py": GOOD,
    })
    assert rows(scan_path(root)) == [
        ("API101", "declared.py", 4, "blocker"),  # PEP 263 coding line honoured
        ("API101", "ok.py", 2, "blocker"),
        ("INP102", "blob.py", None, "info"),
        ("INP102", "latin.py", 1, "info"),
        ("INP102", "requirements.txt", None, "info"),
    ]


def test_huge_file_is_skipped_with_a_finding(write_project):
    root = write_project({"big.py": "x = 1\n" * 2000, "ok.py": GOOD})
    r = scan_path(root, ScanConfig(max_file_size=5000))
    assert rows(r) == [("API101", "ok.py", 2, "blocker"), ("INP103", "big.py", None, "info")]
    assert r.findings[2].code == "INP103" and r.findings[2].evidence == {"bytes": 12000, "limit": 5000}


def test_symlink_loop_and_broken_link(write_project):
    root = write_project({"pkg/ok.py": GOOD})
    os.symlink("..", root / "pkg" / "loop")
    os.symlink("missing.py", root / "dangling.py")
    r = scan_path(root)
    assert rows(r) == [
        ("API101", "pkg/ok.py", 2, "blocker"),
        ("INP104", "dangling.py", None, "info"),
        ("INP104", "pkg/loop", None, "info"),
    ]
    assert r.findings[3].message == "symbolic link loops back to .; not followed"


def test_unreadable_file(write_project, monkeypatch):
    root = write_project({"secret.py": GOOD, "ok.py": GOOD, "requirements.txt": "xformers\n"})
    real_read = Path.read_bytes

    def deny(self):
        if self.name in ("secret.py", "requirements.txt"):
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", deny)  # root ignores chmod 000, so deny at the read
    assert rows(scan_path(root)) == [
        ("API101", "ok.py", 2, "blocker"),
        ("INP101", "requirements.txt", None, "info"),
        ("INP101", "secret.py", None, "info"),
    ]


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file or directory"):
        scan_path(tmp_path / "nope")


def test_scan_never_executes_imports_or_writes(write_project, tmp_path):
    marker = tmp_path / "executed"
    root = write_project({
        "setup.py": f"open({str(marker)!r}, 'w').write('ran')\nfrom setuptools import setup\nsetup(install_requires=['cupy'])\n",
        "boom.py": f"open({str(marker)!r}, 'w').write('imported')\nraise SystemExit(3)\n",
    })
    before = sorted((p.relative_to(root), p.stat().st_mtime_ns) for p in root.rglob("*"))
    r = scan_path(root, ScanConfig(cache_dir=tmp_path / "cache"))
    assert rows(r) == [("DEP101", "setup.py", 3, "blocker")]
    assert not marker.exists()
    assert sorted((p.relative_to(root), p.stat().st_mtime_ns) for p in root.rglob("*")) == before
    assert list((tmp_path / "cache").iterdir())  # the cache went outside the project

from __future__ import annotations

from pathlib import Path

import pytest

from mpsready.scan import ScanConfig, scan_path

collect_ignore_glob = ["fixtures/*"]  # fixture projects are scanned, never collected or run

FIXTURES = Path(__file__).parent / "fixtures"


NO_DECLARATION = ("DEP110", ".", None, "info")  # the project-level "no dependency declaration found" row


def rows(result, *, with_scope: bool = False, keep_no_declaration: bool = False):
    """(code, path, line, severity[, scope]) for every finding, in the result's order.

    DEP110 (the project declares no dependencies) is left out unless ``keep_no_declaration``: most tests write
    a project of Python files only, and assert the code findings; DEP110 has its own tests.
    """
    found = [f for f in result.findings if keep_no_declaration or f.code != "DEP110"]
    if with_scope:
        return [(f.code, f.location.path, f.location.line, f.severity.value, f.scope.value) for f in found]
    return [(f.code, f.location.path, f.location.line, f.severity.value) for f in found]


@pytest.fixture
def scan_fixture():
    def run(name: str, **config):
        return scan_path(FIXTURES / name, ScanConfig(**config))

    return run


@pytest.fixture
def write_project(tmp_path):
    """Write {relpath: text or bytes} under tmp_path/proj and return that directory."""

    def write(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "proj"
        for rel, content in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return root

    return write

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


def bash_readme(*lines: str, title: str = "demo") -> str:
    """A README of one title and one bash block of ``lines`` (the install and run commands the scan reads)."""
    return f"# {title}\n\n```bash\n" + "".join(f"{line}\n" for line in lines) + "```\n"


@pytest.fixture
def scan_project(write_project):
    """Write a small project and scan it, the shape of the round-9-to-12 outlook tests.

    ``scan_project(files, requirements="torch\\n", readme=None)``: ``files`` maps paths to text; ``requirements``
    becomes ``requirements.txt`` and ``readme`` ``README.md`` unless None. A file named both ways is an error (pass
    ``requirements=None`` where ``files`` holds ``requirements.txt``). Extra keywords go to :class:`ScanConfig`."""

    def scan(files: dict[str, str | bytes], *, requirements: str | None = "torch\n", readme: str | None = None,
             **config):
        project: dict[str, str | bytes] = {}
        if requirements is not None:
            project["requirements.txt"] = requirements
        if readme is not None:
            project["README.md"] = readme
        both = sorted(set(project) & set(files))
        if both:
            raise ValueError(f"{', '.join(both)} given in files and as a keyword: give each once")
        project.update(files)
        root = write_project(project)
        return scan_path(root, ScanConfig(**config)) if config else scan_path(root)

    return scan

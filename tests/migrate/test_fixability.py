"""Fixability is declared once, by the transforms' specs, and read without importing migrate or libcst.

The scan and the report ask the rule registry (``mpsready.rules.fixability``); no scan module imports the
migrate package (the scan<->migrate cycle is gone), and the spec modules import no libcst, so a scan, its effort
line and its outlook never load the code-rewriting half.
"""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

from mpsready import rules
from mpsready.migrate import fixability
from mpsready.migrate.specs import TRANSFORM_MODULES, all_specs
from mpsready.migrate.transforms import all_transforms

SRC = Path(__file__).resolve().parents[2] / "src" / "mpsready"


def _imports(path: Path) -> set[str]:
    """Every module an ``import``/``from ... import`` statement of ``path`` names (relative ones resolved)."""
    out: set[str] = set()
    package = ".".join(("mpsready", *path.relative_to(SRC).with_suffix("").parts[:-1]))
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return out


def test_no_scan_module_imports_migrate():
    offenders = sorted(str(p.relative_to(SRC)) for p in (SRC / "scan").rglob("*.py")
                       if any(m == "mpsready.migrate" or m.startswith("mpsready.migrate.") for m in _imports(p)))
    assert offenders == []


def test_no_report_module_imports_migrate():
    offenders = sorted(str(p.relative_to(SRC)) for p in (SRC / "report").rglob("*.py")
                       if any(m == "mpsready.migrate" or m.startswith("mpsready.migrate.") for m in _imports(p)))
    assert offenders == []


def test_the_fixability_modules_import_no_libcst():
    metadata = [SRC / "migrate" / "fixability.py", *sorted((SRC / "migrate" / "specs").glob("*.py"))]
    assert len(metadata) == 1 + 1 + len(TRANSFORM_MODULES)
    for path in metadata:
        assert not any(m == "libcst" or m.startswith("libcst.") for m in _imports(path)), path.name
    # and nothing they import loads it either (a fresh interpreter: this one has libcst loaded already)
    code = ("import sys, mpsready.rules as r; f = r.fixability(); f.effort([]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'libcst'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def test_each_transform_takes_its_codes_from_its_spec():
    for name, spec in zip(TRANSFORM_MODULES, all_specs()):
        mod = importlib.import_module(f"mpsready.migrate.transforms.{name}")
        assert [t.codes for t in all_transforms() if type(t).__module__ == mod.__name__] == [spec.codes], name


def test_the_registry_reads_the_specs():
    assert rules.fixability() is fixability
    declared = {code: fix for spec in all_specs() for code, fix in spec.fixes.items()}
    assert {code: rules.autofix_of(code) for code in rules.autofix_codes()} == declared
    assert sorted(declared) == ["API101", "API102", "API103", "API104", "API107", "API108", "API109", "API113",
                                "API115", "API119", "DEP107", "DTY102", "EXT108"]

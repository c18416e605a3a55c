"""report/ reads stage outputs only: no stage engine is imported from it (check, in mpsready.check, runs them)."""

import ast
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "src" / "mpsready" / "report"

# What report/ may import from other packages: readers of stage outputs and their formats (shared modules,
# the text escaping among them, are in SHARED). Engines (scan.engine, trace.api, record.recorder, env.collect, compare.engine, run.child, emulate,
# ...) are not here.
READERS = {
    "mpsready.record.layout",  # the run-record format (a record is a folder: manifest + tensors)
    "mpsready.record.timing",  # the step-time statistics of a record's manifest
    "mpsready.record.render",  # the warning summary of a record's manifest
    "mpsready.run.document",  # the run document's schema and loader
    "mpsready.pytest_plugin.document",  # the emulated test run's document and loader
    "mpsready.record.mps",  # PyTorch's MPS error and warning texts, to classify what a Mac observed
    "mpsready.kit.archive",
    "mpsready.kit.manifest",  # a kit's manifest and its check (report --kit)  # the safe reader of a kit's results archive (report --mac-results)
}
SHARED = ("mpsready.findings", "mpsready.errors", "mpsready.schema", "mpsready.safeio", "mpsready.rules",
          "mpsready.situation", "mpsready.defaults", "mpsready.output", "mpsready.commands",
          "mpsready.escape", "mpsready.versions")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.startswith("mpsready")}


def test_report_imports_readers_only():
    outside = {}
    for path in sorted(REPORT.rglob("*.py")):
        for mod in _imports(path):
            if mod == "mpsready" or mod.startswith(("mpsready.report",) + SHARED):
                continue
            if mod not in READERS:
                outside.setdefault(str(path.relative_to(REPORT)), []).append(mod)
    assert outside == {}


def test_check_lives_outside_report():
    assert not (REPORT / "pipeline.py").exists()
    assert not (REPORT / "check_cli.py").exists()
    assert not (REPORT / "demo_cli.py").exists()

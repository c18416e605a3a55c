"""The scan's estimate and migrate's plan agree: the same auto-fix registry, the same answer per finding.

Three sources once said "migrate makes this edit" (a flag on the rule, the auto-fix registry, the transforms);
these tests fail when any two of them could disagree again: a transform answering a code without an AutoFix
(or an AutoFix no transform answers), a finding the effort counts as auto-fixable that migrate does not fix (or
the reverse), an outlook edit marked "migrate can make it" that migrate does not make.
"""

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from mpsready.migrate.fixability import CODE_PREFIXES, buckets, effort, plan_effort
from mpsready.migrate.engine import migrate_path
from mpsready.migrate.transforms import all_transforms
from mpsready.rules import autofix_codes
from mpsready.scan import ScanConfig
from mpsready.scan.engine import scan_path

HERE = Path(__file__).parent
FIXTURES = sorted(p.name for p in (HERE / "fixtures").iterdir() if p.suffix in (".py", ".ipynb") or p.is_dir())
CONFIG = ScanConfig(cache_dir=None)

# Codes a transform uses only to label edits it finds itself (no scan finding of that code is ever fixed):
# EXT102 for the guarded import of an in-repo CUDA extension whose file already falls back on None.
LABEL_ONLY = {"EXT102"}

# Where the estimate and the plan differ on the fixtures, and why: none. The facts only the syntax tree had are
# now the findings' own evidence (a float32 cast after the move: DTY102 ``cast_after_move``; a file calling
# autocast or GradScaler: API115 ``amp_calls``) and the estimate reads the project's PyTorch floor as migrate does.
KNOWN: dict = {}

# KNOWN differences whose finding the scan's outlook lists no edit for
NOT_IN_OUTLOOK: set = set()

# effort (estimate) and the plan's counts per fixture, exactly
EFFORT = {
    "accelerator_floor": ({"auto_fixable": 3, "manual": 0, "kept": 0, "files_touched": 1}, (3, 0, 0)),
    "amp_floor_2_8": ({"auto_fixable": 3, "manual": 0, "kept": 0, "files_touched": 1}, (3, 0, 0)),
    "amp_no_floor": ({"auto_fixable": 2, "manual": 1, "kept": 0, "files_touched": 1}, (2, 2, 0)),
    "api101_dot_cuda.py": ({"auto_fixable": 5, "manual": 0, "kept": 1, "files_touched": 1}, (5, 0, 1)),
    "api102_torch_cuda.py": ({"auto_fixable": 6, "manual": 1, "kept": 3, "files_touched": 1}, (6, 1, 3)),
    "api103_device_literal.py": ({"auto_fixable": 12, "manual": 0, "kept": 0, "files_touched": 1}, (12, 0, 0)),
    "api104_considers_mps.py": ({"auto_fixable": 0, "manual": 0, "kept": 0, "files_touched": 0}, (0, 0, 0)),
    "api104_selection.py": ({"auto_fixable": 4, "manual": 0, "kept": 0, "files_touched": 1}, (4, 0, 0)),
    "api107_nccl.py": ({"auto_fixable": 2, "manual": 1, "kept": 0, "files_touched": 1}, (2, 1, 0)),
    # no floor: the 4 torch.cuda.amp calls become torch.amp('cuda') (fixed, each with a "left off on MPS" entry); the
    # CUDA-typed GradScaler() and autocast("cuda") are already what the Mac path can run below the floor: manual
    "api108_amp.py": ({"auto_fixable": 4, "manual": 3, "kept": 0, "files_touched": 1}, (4, 7, 0)),
    "api113_pin_memory.py": ({"auto_fixable": 1, "manual": 0, "kept": 1, "files_touched": 1}, (1, 0, 1)),
    "api115_device_string.py": ({"auto_fixable": 4, "manual": 0, "kept": 0, "files_touched": 1}, (4, 0, 0)),
    "api119_default_device.py": ({"auto_fixable": 3, "manual": 1, "kept": 1, "files_touched": 1}, (3, 1, 1)),
    "dty102_numpy_float64.py": ({"auto_fixable": 1, "manual": 1, "kept": 0, "files_touched": 1}, (1, 1, 0)),
    # the DEP107 import migrate guards is a dependency finding: the plan lists it as fixed, the code effort omits it
    "ext102_guarded_import.py": ({"auto_fixable": 0, "manual": 0, "kept": 0, "files_touched": 0}, (0, 0, 0)),
    "ext108_cpu_keyed_fallback.py": ({"auto_fixable": 3, "manual": 0, "kept": 0, "files_touched": 1}, (3, 0, 0)),
    "notebook.ipynb": ({"auto_fixable": 3, "manual": 0, "kept": 0, "files_touched": 1}, (3, 0, 0)),
}


def test_transforms_and_the_autofix_registry_name_the_same_codes():
    answered = {c for t in all_transforms() for c in t.codes}
    assert answered - LABEL_ONLY == set(autofix_codes())


def _copy(name: str, tmp_path: Path) -> Path:
    src, dst = HERE / "fixtures" / name, tmp_path / name
    (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    return dst


def _outcomes(target: Path):
    """(estimate per finding, plan's outcome per finding), keyed by (code, path, line) with repeats counted."""
    scan = scan_path(target, CONFIG)
    plan = migrate_path(target, config=CONFIG)
    fixed = Counter((r.code, r.path, r.line) for r in plan.fixed)
    manual = Counter((m.code, m.path, m.line) for m in plan.manual)
    kept = Counter((m.code, m.path, m.line) for m in plan.kept)
    pairs = []
    for f, kind, _why in buckets(scan.findings, scan.torch_floor):
        if kind == "other":
            continue
        key = (f.code, f.location.path, f.location.line)
        if (f.evidence or {}).get("cell_line") is not None:  # a notebook's manual/kept records give the cell's line
            cell_key = (f.code, f.location.path, f.evidence["cell_line"])
        else:
            cell_key = key
        actual, where = next(((k, c) for k, c in (("auto", fixed), ("manual", manual), ("kept", kept))
                              if c[key if k == "auto" else cell_key] > 0), ("none", None))
        if where is not None:
            where[key if actual == "auto" else cell_key] -= 1
        pairs.append((key, kind, actual))
    return scan, plan, pairs


@pytest.mark.parametrize("name", FIXTURES)
def test_each_finding_gets_the_same_answer_from_the_estimate_and_the_plan(name, tmp_path):
    _scan, _plan, pairs = _outcomes(_copy(name, tmp_path))
    differ = {(Path(k[1]).name if name.endswith((".py", ".ipynb")) else name, k[0], k[2]): (kind, actual)
              for k, kind, actual in pairs if kind != actual}
    assert differ == {k: v for k, v in KNOWN.items() if k[0] == name}


@pytest.mark.parametrize("name", FIXTURES)
def test_effort_and_plan_counts_exactly(name, tmp_path):
    scan, plan, _pairs = _outcomes(_copy(name, tmp_path))
    code_fixed = [r for r in plan.fixed if r.code.startswith(CODE_PREFIXES)]
    assert (effort(scan.findings, scan.torch_floor), (len(code_fixed), len(plan.manual), len(plan.kept))) == EFFORT[name]
    # the one sentence scan, report and migrate print: the plan's four numbers are the estimate's
    assert plan_effort(plan.fixed, plan.manual, plan.kept) == EFFORT[name][0]


# issue 35 item 3: real-like trees (a CUDA switch whose guards move, an is_cuda guard, a plain selection with a
# library that cannot see it, a device parameter default, autocast without a floor, migrate's own guards)
PROJECTS = {
    "amp_floor": {"auto_fixable": 2, "manual": 1, "kept": 0, "files_touched": 1},
    "layer_selection": {"auto_fixable": 2, "manual": 0, "kept": 2, "files_touched": 2},  # estimate before: 1, 0, 3
    "no_cuda_flag": {"auto_fixable": 4, "manual": 0, "kept": 1, "files_touched": 1},  # estimate before: 1, 0, 4
    "research_like": {"auto_fixable": 7, "manual": 1, "kept": 1, "files_touched": 4},
    "threaded_devices": {"auto_fixable": 4, "manual": 0, "kept": 0, "files_touched": 2},
}


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_scan_report_and_migrate_print_the_same_effort_on_real_like_trees(name, tmp_path, capsys):
    from mpsready.cli import main
    from mpsready.report.evidence.scan import from_doc
    from mpsready.report.verdict import _effort_sentence

    root = tmp_path / name
    shutil.copytree(HERE / "projects" / name, root)
    sentence = "migrate effort ({}): {auto_fixable} auto-fixable finding(s) in {files_touched} file(s) (`mpsready " \
               "migrate PATH` shows the diff), {manual} manual, {kept} need no change"
    main(["scan", str(root), "--format", "json", "--no-cache"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["effort"] == {**PROJECTS[name], "basis": "estimate"}
    # the report prints the scan's own numbers (before: recomputed over the main scope without the floor)
    assert _effort_sentence(from_doc(doc), effort) == sentence.format("estimate", **PROJECTS[name])
    main(["migrate", str(root), "--no-cache"])
    assert "  " + sentence.format("plan", **PROJECTS[name]) + "\n" in capsys.readouterr().err
    main(["migrate", str(root), "--no-cache", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["summary"]["effort"] == {**PROJECTS[name], "basis": "plan"}


@pytest.mark.parametrize("name", FIXTURES)
def test_outlook_marks_exactly_the_edits_migrate_makes(name, tmp_path):
    scan, plan, _pairs = _outcomes(_copy(name, tmp_path))
    fixed = {(r.path, r.line, r.code) for r in plan.fixed}
    marked = {(e.path, e.line, e.code) for e in scan.edits if e.migrate}
    unmarked = {(e.path, e.line, e.code) for e in scan.edits if not e.migrate and e.kind == "edit"}
    assert {(name, code, line) for _path, line, code in marked - fixed} == {
        k for k, (estimate, _plan) in KNOWN.items() if k[0] == name and estimate == "auto" and k not in NOT_IN_OUTLOOK}
    assert unmarked & fixed == set()

"""A kernel module imported inside a function that is itself called only under try/except with a fallback
(whisper's ``dtw_cuda()`` shape), plus a guarded absolute import in a function (fixture `kernel_callers`)."""

from pathlib import Path

from mpsready.scan import scan_path
from mpsready.scan.code.analyzer import analyze_source
from mpsready.scan.code.result import ImportRecord
from tests.scan.conftest import FIXTURES, rows

OPS = (FIXTURES / "kernel_callers" / "pkg" / "ops.py").read_text(encoding="utf-8")
FASTOPS = (FIXTURES / "kernel_callers" / "pkg" / "fastops.py").read_text(encoding="utf-8")


def test_import_sites_record_their_guard():
    assert analyze_source(OPS).imports == [
        ImportRecord(0, "subprocess", (), 1, False),
        ImportRecord(1, "fastops", ("scale_kernel",), 9, "fast"),  # in fast(), called only under try/except (line 26)
        ImportRecord(0, "pkg.fastops", ("scale_kernel",), 16, True),  # in a try whose handler falls back (line 19)
    ]


def test_kernel_imported_only_under_fallbacks_degrades(scan_fixture):
    r = scan_fixture("kernel_callers")
    assert rows(r) == [("DEP107", "pkg/fastops.py", 1, "degrades"), ("EXT103", "pkg/fastops.py", 5, "degrades")]
    ext = next(f for f in r.findings if f.code == "EXT103")
    assert ext.output_evidence() == {"library": "triton", "fallback": "imported in fast() at pkg/ops.py:9, which is "
                            "called only under try/except"}
    assert r.outlook.value == "runs_on_mac"  # tests/test_ops.py imports fast(): tests do not count


def _project(write_project, **extra: str) -> Path:
    files = {"pkg/__init__.py": "", "pkg/fastops.py": FASTOPS, "pkg/ops.py": OPS}
    files.update({k.replace("__", "/") + ".py": v for k, v in extra.items()})
    return write_project(files)


def test_unguarded_module_level_import_elsewhere_keeps_the_blocker(write_project):
    r = scan_path(_project(write_project, pkg__train="from .fastops import scale_kernel\n"))
    assert rows(r) == [("DEP107", "pkg/fastops.py", 1, "blocker"), ("EXT103", "pkg/fastops.py", 5, "blocker")]
    assert r.outlook.value == "stay_on_cuda"


def test_unguarded_import_in_an_unguarded_function_keeps_the_blocker(write_project):
    r = scan_path(_project(write_project, pkg__train=(
        "def go(x):\n    from pkg.fastops import scale_kernel\n\n    return scale_kernel(x)\n\n\ngo(1)\n")))
    assert rows(r) == [("DEP107", "pkg/fastops.py", 1, "blocker"), ("EXT103", "pkg/fastops.py", 5, "blocker")]


def test_one_unguarded_call_of_the_function_keeps_the_blocker(write_project):
    r = scan_path(_project(write_project, pkg__ops=OPS + "\n\nfast(2)\n"))
    assert rows(r) == [("DEP107", "pkg/fastops.py", 1, "blocker"), ("EXT103", "pkg/fastops.py", 5, "blocker")]


def test_main_code_importing_the_function_keeps_the_blocker(write_project):
    r = scan_path(_project(write_project, pkg__train="from pkg.ops import fast\n\nfast(3)\n"))
    assert rows(r) == [("DEP107", "pkg/fastops.py", 1, "blocker"), ("EXT103", "pkg/fastops.py", 5, "blocker")]


def test_function_passed_by_value_is_not_guarded():
    src = OPS + "\n\nHANDLERS = [fast]\n"
    assert [i.guard for i in analyze_source(src).imports] == [False, False, True]


def test_each_import_is_judged_by_the_definition_around_it_among_several():
    # the enclosing definition is found among many (the second, a one-line one); a redefined name guards neither
    # definition's import (its calls may mean either)
    source = ("def a():\n    pass\n\ndef fast():\n    from .fastops import k\n    return k()\n\n"
              "def slow(): import os\n\ndef redo():\n    import json\n\ndef redo():\n    import csv\n\n"
              "try:\n    fast()\n    slow()\n    redo()\nexcept ImportError:\n    pass\n")
    guards = [(r.module, r.guard) for r in analyze_source(source).imports]
    assert guards == [("fastops", "fast"), ("os", "slow"), ("json", False), ("csv", False)]

"""The trigger-word prefilter (scan/code/triggers.py) must never change what the scan finds.

Completeness: every code rule declares trigger words, its registry example and every fixture finding
contain one of them; equivalence: the analysis with and without the prefilter gives identical results
on the fixture projects, the examples, mpsready's own sources and a sample of the installed torch
package.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from mpsready import rules as registry
from mpsready.scan import ScanConfig, scan_path
from mpsready.scan.code import analyzer
from mpsready.scan.code.analyzer import analyze_source
from mpsready.scan.code.result import ImportRecord
from mpsready.scan.code.triggers import (find_word, line_trigger_words, may_fire, rule_triggers, trigger_lines,
                                          trigger_words)
from mpsready.scan.sources.notebook import code_cells, python_of

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
# rules the Python analyser emits; the others come from declaration files or the walker
CODE_RULES = {f"API1{n:02d}" for n in range(1, 19)} | {f"DTY10{n}" for n in range(1, 5)} \
    | {f"EXT10{n}" for n in range(1, 8)} | {"DEP107"}


def _sources() -> list[tuple[str, str]]:
    """(label, Python text) for every .py file and notebook code cell of the fixtures, examples and src."""
    out = []
    for base in (FIXTURES, ROOT / "examples", ROOT / "src" / "mpsready", ROOT / "docs"):
        for p in sorted(base.rglob("*.py")):
            out.append((str(p.relative_to(ROOT)), p.read_bytes().decode("utf-8")))
        for p in sorted(base.rglob("*.ipynb")):
            for cell in code_cells(p.read_text(encoding="utf-8")):
                out.append((f"{p.relative_to(ROOT)}#{cell.index}", python_of(cell.source)))
    return out


# what a registry example assumes was imported before it
PRELUDE = "import torch\nimport numpy as np\n"
PRELUDES = {"EXT107": "from torch.utils.cpp_extension import CppExtension\n"}


def test_every_code_rule_declares_triggers_and_its_example_fires_through_one():
    assert {code for code in CODE_RULES if not rule_triggers(code)} == set()
    for code in sorted(CODE_RULES - {"EXT101"}):  # EXT101 comes from walked .cu files
        text = PRELUDES.get(code, PRELUDE) + registry.get(code).example
        assert code in {d["code"] for d in analyze_source(text, prefilter=False).findings}, code
        assert may_fire(text, rule_triggers(code)), (code, text)
    assert may_fire(repr(registry.get("EXT101").example), rule_triggers("EXT101"))  # a .cu path named in code
    assert all(not rule_triggers(r.code) for r in registry.all_rules() if r.code.startswith("INP"))


def test_trigger_words_include_the_knowledge_base_imports_and_the_cuda_table():
    words = set(trigger_words())
    assert {"flash_attn", "xformers", "apex", "nvidia", "MinkowskiEngine", "cuda", "nccl", "float64"} <= words
    assert trigger_words()[0] == "cuda"
    assert len(words) == len(trigger_words())


@pytest.mark.parametrize("text, word, found", [
    ("model.cuda()", "cuda", True),
    ("use_cuda = True", "cuda", False),
    ("x = 'cuda:0'", "cuda", True),
    ("cudaMalloc(p)", "cuda", False),
    ("torch.float64", "float64", True),
    ("load(sources=['k.cu'])", "cu", True),
    ("current = 1", "cu", False),
    ("re.compile('x')", "compile", True),
])
def test_find_word_needs_whole_words(text, word, found):
    assert (find_word(text, word) >= 0) is found


def test_every_fixture_finding_contains_a_trigger_of_its_rule():
    fired = set()
    for label, text in _sources():
        for d in analyze_source(text, prefilter=False).findings:
            if d["code"].startswith("INP"):
                continue
            assert d["code"] in CODE_RULES, (label, d["code"])
            assert may_fire(text, rule_triggers(d["code"])), (label, d["code"], d["line"])
            fired.add(d["code"])
    assert len(fired) >= 20  # the fixtures exercise most code rules


def test_analysis_is_identical_with_and_without_the_prefilter_on_every_fixture_source():
    skipped = 0
    for label, text in _sources():
        on, off = analyze_source(text, prefilter=True), analyze_source(text, prefilter=False)
        assert on.to_dict() == off.to_dict(), label
        skipped += not may_fire(text)
    assert skipped >= 10  # some sources really take the short path


@pytest.mark.parametrize("project", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_scan_is_identical_with_and_without_the_prefilter(project, monkeypatch):
    def scan():
        r = scan_path(FIXTURES / project, ScanConfig(cache_dir=None, jobs=1))
        return [f.to_dict() for f in r.findings], r.outlook, r.files_scanned, r.lines_scanned, r.suppressed

    with_prefilter = scan()
    monkeypatch.setattr(analyzer, "PREFILTER", False)
    assert scan() == with_prefilter


def _torch_dir() -> Path | None:
    spec = importlib.util.find_spec("torch")  # locates the package without importing it
    return Path(list(spec.submodule_search_locations)[0]) if spec and spec.submodule_search_locations else None


@pytest.mark.skipif(_torch_dir() is None, reason="torch is not installed")
def test_identical_on_a_sample_of_the_torch_package():
    files = sorted(p for p in _torch_dir().rglob("*.py") if p.is_file())[::9]  # about 250 files
    assert len(files) > 200
    short = 0
    for p in files:
        data = p.read_bytes()
        on, off = analyze_source(data, prefilter=True), analyze_source(data, prefilter=False)
        assert on.to_dict() == off.to_dict(), p
        short += not may_fire(data.decode("utf-8", "replace"))
    assert short > 50


# ------------------------------------------------------------------ bad input keeps its findings
def test_syntax_error_without_triggers_is_still_inp105(write_project):
    root = write_project({"broken.py": "def f(:\n    return 1\n", "fine.py": "import os\nprint(os.sep)\n"})
    r = scan_path(root, ScanConfig(cache_dir=None))
    assert [(f.code, f.location.path, f.location.line) for f in r.findings] == [("DEP110", ".", None), ("INP105", "broken.py", 1)]


def test_python2_file_without_triggers_is_still_inp106(write_project):
    root = write_project({"old.py": "import os\nprint 'hello'\n"})
    r = scan_path(root, ScanConfig(cache_dir=None))
    assert [(f.code, f.location.path, f.location.line) for f in r.findings] == [("DEP110", ".", None), ("INP106", "old.py", 2)]


def test_trigger_less_source_keeps_its_imports_and_suppressions():
    text = "try:\n    from .kernels import fused\nexcept ImportError:\n    fused = None\nx = 1  # mpsready: ignore[DEP101]\n"
    assert not may_fire(text)
    res = analyze_source(text)
    assert res.findings == [] and res.parsed
    assert res.imports == [ImportRecord(1, "kernels", ("fused",), 2, True)]
    assert res.suppress == {"5": ["DEP101"]}


def test_trigger_less_importers_still_decide_a_kernel_fallback(write_project):
    kernel = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"
    guarded = "try:\n    from pkg.kern import k\nexcept ImportError:\n    k = None\n"
    plain = "from pkg.kern import k\n"
    assert not may_fire(guarded) and not may_fire(plain)
    root = write_project({"pkg/__init__.py": "", "pkg/kern.py": kernel, "pkg/a.py": guarded})
    rows = [(f.code, f.location.line, f.severity.value) for f in scan_path(root, ScanConfig(cache_dir=None)).findings
            if f.code == "EXT103"]
    assert rows == [("EXT103", 4, "degrades")]
    (root / "pkg" / "b.py").write_text(plain)
    rows = [(f.code, f.location.line, f.severity.value) for f in scan_path(root, ScanConfig(cache_dir=None)).findings
            if f.code == "EXT103"]
    assert rows == [("EXT103", 4, "blocker")]


def test_suppression_in_a_trigger_less_setup_py_still_applies(write_project):
    setup = "from setuptools import setup\nsetup(name='x', install_requires=[\n    'flash-attn',  # mpsready: ignore[DEP101]\n])\n"
    assert not may_fire(setup)
    r = scan_path(write_project({"setup.py": setup}), ScanConfig(cache_dir=None))
    assert [f.code for f in r.findings] == [] and r.suppressed == 1


# ------------------------------------------------------------------ statement pruning inside a source that can fire
PRUNING_CASES = {
    # a name bound to a torch.cuda path is used on a line without the word "cuda"
    "alias": ("import os\nimport torch\nif os.environ.get('X'):\n    import torch.cuda._sanitizer as csan\n\n"
              "    csan.enable_cuda_sanitizer()\n", [("API102", 6)]),
    "alias in a function": ("import torch\n\ndef f():\n    from torch.cuda import synchronize as sync\n    sync()\n",
                            [("API102", 5)]),
    # a variable assigned a CUDA literal, used far away on a line without a trigger
    "device variable": ("import torch\ntarget = 'cuda:1'\n\ndef g(x):\n    return x.to(target)\n",
                        [("API103", 5)]),
    # a variable holding a NumPy float64 array, moved to a device later
    "numpy variable": ("import numpy as np\nimport torch\na = np.random.rand(3)\nb = 1\n"
                       "t = torch.from_numpy(a).to(d)\n", [("DTY102", 5)]),
    # reassigned in a statement that cannot fire: no longer a NumPy array
    "numpy variable reassigned": ("import numpy as np\nimport torch\na = np.random.rand(3)\na = load()\n"
                                  "t = torch.from_numpy(a).to(d)\n", []),
    # old Mac line ends: pruning is off, the analysis is whole
    "carriage returns": ("import torch\rx = 1\rtorch.cuda.synchronize()\r", [("API102", 3)]),
}


@pytest.mark.parametrize("name", sorted(PRUNING_CASES))
def test_pruning_keeps_findings_reached_through_aliases_and_variables(name):
    text, expected = PRUNING_CASES[name]
    for prefilter in (True, False):
        assert [(d["code"], d["line"]) for d in analyze_source(text, prefilter=prefilter).findings] == expected
    assert analyze_source(text, prefilter=True).to_dict() == analyze_source(text, prefilter=False).to_dict()


def _naive_lines(text: str, words: tuple[str, ...]) -> list[int]:
    """trigger_lines spelled out: every word on its own, whole words for identifiers."""
    found = set()
    for word in words:
        i = find_word(text, word) if word[0].isidentifier() else text.find(word)
        while i >= 0:
            found.add(text.count("\n", 0, i) + 1)
            i = find_word(text, word, i + 1) if word[0].isidentifier() else text.find(word, i + 1)
    return sorted(found)


def test_grouped_trigger_search_finds_the_same_lines_as_one_search_per_word():
    texts = [text for _label, text in _sources()]
    torch_dir = _torch_dir()
    if torch_dir is not None:
        texts += [p.read_bytes().decode("utf-8", "replace") for p in sorted(torch_dir.rglob("*.py"))[::40]]
    texts.append("x = torch.cdouble\ny = a.to_sparse_csr()\nz = 'k.cuh'\nuse_cuda = 1\ncomplex64x = 2\n")
    words = line_trigger_words()
    assert trigger_lines(texts[-1]) == [1, 2, 3]
    for text in texts:
        assert trigger_lines(text) == _naive_lines(text, words)
        assert may_fire(text, words) is bool(_naive_lines(text, words))


def test_name_lines_bound_where_the_tree_can_name_an_identifier():
    from mpsready.scan.code.triggers import name_lines

    assert name_lines("a = foo\nb = foobar\nfoo()\n", ("foo",)) == [1, 3]
    # a fullwidth identifier is NFKC-normalised in the tree: every non-ASCII line is kept
    fullwidth = "\uff46\uff4f\uff4f"
    assert name_lines(f"s = '\u00e9'\nb = 1\n{fullwidth}()\nfoo\n", ("foo",)) == [1, 3, 4]
    assert name_lines("a = 1\rfoo()\n", ("foo",)) is None  # ast counts a lone \r as a line break


def test_walk_spanning_finds_what_the_whole_walk_finds_in_its_order():
    import ast

    from mpsready.scan.code.astutil import walk_spanning
    from mpsready.scan.code.triggers import name_lines

    text = "import os\n\ndef f():\n    return foo(1)\n\nx = 2\nfoo(x)\n\uff46\uff4f\uff4f(3)\n"
    tree = ast.parse(text)
    whole = [(n.lineno, n.col_offset) for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "foo"]
    bounded = [(n.lineno, n.col_offset) for n in walk_spanning(tree, name_lines(text, ("foo",)))
               if isinstance(n, ast.Name) and n.id == "foo"]
    assert whole == bounded == [(7, 0), (8, 0), (4, 11)]
    assert sum(1 for _ in walk_spanning(tree, [])) == 1  # no lines: the module alone, no statement entered


def test_pure_refs_walk_only_the_lines_naming_a_suffix():
    from mpsready.scan.code.summaries import model_summaries
    from mpsready.scan.code.result import CodeResult

    source = ("import ops\n\ndef attn_core_pytorch(q):\n    return q\n\n@ops.wrap_ref\ndef run(q):\n"
              "    s = '\u00e9'\n    y = ops.scan_naive(q)\n    return attn_core_pytorch(y)\n\n"
              "def g(x: ops.t_torch) -> int:\n    return 1\n")
    result = CodeResult()
    model_summaries(ast.parse(source), source, result)
    # annotations are not walked (astutil.walk's leaf fields), as before the line bound
    assert result.pure_refs == ["attn_core_pytorch", "scan_naive", "wrap_ref"]


def test_launched_paths_and_mps_checks_walk_only_the_lines_quoting_them():
    from mpsready.scan.code.result import CodeResult
    from mpsready.scan.code.summaries import launched_paths, model_summaries

    source = ("import subprocess\n\ndef main():\n    subprocess.run(['python',\n"
              "                    'scripts/ppo.py'])\n    run(script=\"b.py\")\n"
              "    note = 'see a.py for details'\n\nif dev ==\\\n        'mps':\n    pass\n")
    tree = ast.parse(source)
    # the bounded walk finds the whole walk's paths, in its order (the literal on another line than its call)
    assert launched_paths(tree, source) == launched_paths(tree) == ["b.py", "scripts/ppo.py"]
    result = CodeResult()
    model_summaries(tree, source, result)
    assert result.launches == ["b.py", "scripts/ppo.py"]
    assert result.mps_on_request  # the comparison's statement starts a line above its 'mps'
    quiet = CodeResult()
    model_summaries(ast.parse("x = 'mps'\nif dev == 'cuda':\n    pass\n"), "x = 'mps'\nif dev == 'cuda':\n    pass\n", quiet)
    assert not quiet.mps_on_request


@pytest.mark.parametrize("text", ["", "x.cu", "a.cuda", "'a.cu'", 'b.cu"', "c.cuh", "mps", "'mps", 'x = "mps"', "smps",
                                  "f.py", "f.py'", 'f.py"', ".py.py'", "cu.cu.cu"])
def test_find_next_to_is_the_or_of_its_substring_tests(text):
    from mpsready.scan.code.triggers import find_next_to

    assert find_next_to(text, ".cu", after="\"'h") == ('.cu"' in text or ".cu'" in text or ".cuh" in text)
    assert find_next_to(text, "mps", before="'\"") == ('"mps' in text or "'mps" in text)
    assert find_next_to(text, ".py", after="'\"") == (".py'" in text or '.py"' in text)


def test_pure_call_stems_cover_every_pure_call_and_contains_any_is_the_or_of_its_needles():
    from mpsready.scan.code.summaries import _PURE_CALL_STEMS, _PURE_CALLS
    from mpsready.scan.code.triggers import contains_any

    assert sorted(c for _stem, calls in _PURE_CALL_STEMS for c in calls) == sorted(_PURE_CALLS)
    assert all(stem in c for stem, calls in _PURE_CALL_STEMS for c in calls)
    for text in ("", "attn_pytorch(q)", "x_torch (q)", "ref(", "a_reference(b)", "naive(", "scan_native(x)",
                 "_re_ref(", "torch(x)", "_reference", "f_ref(", "a._torch("):
        for stem, calls in _PURE_CALL_STEMS:
            assert contains_any(text, calls, stem) == any(c in text for c in calls), (text, stem)

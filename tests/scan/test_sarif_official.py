"""SARIF against the official OASIS 2.1.0 schema (vendored in sarif_schema/), and what GitHub code scanning
needs to track alerts: fingerprints, regions, repository-relative URIs, rules, invocations, suppressions."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import jsonschema
import pytest

from mpsready import rules as registry
from mpsready.findings import Finding, Location, Severity, Verdict
from mpsready.scan import ScanConfig, scan_path
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.locate import git_root
from mpsready.scan.formats.sarif import SarifFormat, to_sarif, to_sarif_many

SCHEMA_DIR = Path(__file__).parent / "sarif_schema"
SCHEMA_PATH = SCHEMA_DIR / "sarif-schema-2.1.0.json"
OFFICIAL_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
FIXTURES = Path(__file__).parent / "fixtures"
FIX_101 = ("Pick a device once (`device = torch.accelerator.current_accelerator()` or an MPS-aware selection) "
           "and use `.to(device)`.")


def validate(doc: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def make_repo(tmp_path: Path, files: dict[str, str], git: str = "dir") -> Path:
    """A repository under tmp_path/repo: ``.git`` as a directory with HEAD, or as a worktree's gitdir file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    if git == "dir":
        (repo / ".git").mkdir()
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    elif git == "file":
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return repo


def sarif_of(path: Path, **config) -> dict:
    return json.loads(SarifFormat().render(scan_path(path, ScanConfig(**config))))


def test_vendored_schema_is_the_official_file_with_its_licence():
    assert hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest() == OFFICIAL_SHA256
    assert SCHEMA["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    assert (SCHEMA_DIR / "LICENSE").read_text().lstrip().startswith("Apache License")


def test_official_schema_rejects_what_code_scanning_would_reject():
    # a test that cannot fail is a defect: the validator must catch a missing driver name and a bad level
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}
    assert [e.message for e in VALIDATOR.iter_errors(bad)] == ["'name' is a required property"]
    bad_level = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                               "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}
    assert [e.message for e in VALIDATOR.iter_errors(bad_level)] == [
        "'fatal' is not one of ['none', 'note', 'warning', 'error']"]


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_scan_is_valid_official_sarif_with_a_region_on_every_result(fixture):
    doc = sarif_of(FIXTURES / fixture)
    validate(doc)
    run = doc["runs"][0]
    root = git_root(FIXTURES) or FIXTURES / fixture
    for res in run["results"]:
        phys = res["locations"][0]["physicalLocation"]
        assert phys["region"]["startLine"] >= 1
        assert phys["artifactLocation"]["uriBaseId"] == "SRCROOT"
        assert (root / phys["artifactLocation"]["uri"]).is_file(), phys  # a real file of the repository
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
    prints = [r["partialFingerprints"]["mpsready/v1"] for r in run["results"]]
    assert len(prints) == len(set(prints))


def test_every_registered_rule_with_help_uri_precision_and_problem_severity():
    run = sarif_of(FIXTURES / "code")["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert sorted(rules) == [r.code for r in registry.all_rules()]
    assert rules["API101"]["helpUri"] == \
        "https://github.com/mpsready/mpsready/blob/main/docs/rules.md#api101-dot-cuda-call-blocker"
    assert rules["API101"]["properties"] == {"tags": ["mps", "API"], "precision": "high", "problem.severity": "error"}
    assert rules["API104"]["properties"]["precision"] == "medium"
    assert rules["API104"]["properties"]["problem.severity"] == "warning"
    assert rules["INP105"]["properties"]["precision"] == "very-high"
    assert rules["INP105"]["properties"]["problem.severity"] == "recommendation"
    # every anchor is a heading of the generated rules page (GitHub's slug of "## CODE `name` (severity)")
    docs = (Path(__file__).parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    headings = {line[3:] for line in docs.splitlines() if line.startswith("## ")}
    for r in registry.all_rules():
        assert f"{r.code} `{r.name}` ({r.severity.value})" in headings
        assert rules[r.code]["helpUri"].endswith("#" + registry.doc_anchor(r))


def test_message_title_ends_with_a_sentence_break_before_fix(tmp_path):
    repo = make_repo(tmp_path, {"train.py": "import torch\nm = torch.nn.Linear(2, 2).cuda()\n",
                                "requirements.txt": "torch\n"})
    res = [r for r in sarif_of(repo)["runs"][0]["results"] if r["ruleId"] == "API101"]
    assert res[0]["message"]["text"] == (
        ".cuda() moves to CUDA; on a Mac it raises 'Torch not compiled with CUDA enabled'. Fix: " + FIX_101)


def test_scanning_a_subfolder_gives_repository_relative_uris(tmp_path, monkeypatch):
    repo = make_repo(tmp_path, {"src/pkg/train.py": "import torch\nx = torch.zeros(1).cuda()\n",
                                "src/requirements.txt": "torch\n"})
    monkeypatch.chdir(tmp_path)
    run = sarif_of(repo / "src")["runs"][0]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
    assert uris == ["src/pkg/train.py"]
    assert (repo / uris[0]).is_file()
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == repo.resolve().as_uri() + "/"
    assert run["invocations"][0]["workingDirectory"] == {"uri": tmp_path.resolve().as_uri() + "/"}
    assert run["invocations"][0]["executionSuccessful"] is True
    assert run["properties"]["scanned"] == "src"


def test_a_worktree_gitdir_file_marks_the_root_and_no_repository_means_the_scanned_folder(tmp_path):
    repo = make_repo(tmp_path, {"a/b/train.py": "import torch\ntorch.zeros(1).cuda()\n"}, git="file")
    run = sarif_of(repo / "a" / "b")["runs"][0]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
            if r["ruleId"] == "API101"] == ["a/b/train.py"]
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "train.py").write_text("import torch\ntorch.zeros(1).cuda()\n")
    if git_root(lone) is None:  # tmp_path sits in no repository on any sane machine
        run = sarif_of(lone)["runs"][0]
        assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == lone.resolve().as_uri() + "/"
        assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.py"


def test_directory_and_file_level_findings_point_at_line_1_of_a_real_file(tmp_path):
    repo = make_repo(tmp_path, {"proj/train.py": "print(1)\n", "proj/README.md": "# x\n",
                                "cuda/csrc/kernel.cu": "__global__ void k() {}\n",
                                "cuda/requirements.txt": "numpy\n"})
    dep110 = [r for r in sarif_of(repo / "proj")["runs"][0]["results"] if r["ruleId"] == "DEP110"]
    assert [r["locations"][0]["physicalLocation"] for r in dep110] == [
        {"artifactLocation": {"uri": "proj/README.md", "uriBaseId": "SRCROOT"}, "region": {"startLine": 1}}]
    ext101 = [r for r in sarif_of(repo / "cuda")["runs"][0]["results"] if r["ruleId"] == "EXT101"]
    assert [r["locations"][0]["physicalLocation"] for r in ext101] == [
        {"artifactLocation": {"uri": "cuda/csrc/kernel.cu", "uriBaseId": "SRCROOT"}, "region": {"startLine": 1}}]


def test_fingerprints_tell_two_findings_on_one_line_apart_and_survive_an_edit_above(tmp_path):
    line = "a = torch.zeros(2).cuda(); b = torch.ones(2).cuda()\n"
    repo = make_repo(tmp_path, {"train.py": "import torch\n" + line, "requirements.txt": "torch\n"})

    def api101():
        return [(r["locations"][0]["physicalLocation"]["region"], r["partialFingerprints"]["mpsready/v1"])
                for r in sarif_of(repo)["runs"][0]["results"] if r["ruleId"] == "API101"]

    before = api101()
    assert [region for region, _ in before] == [{"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 26},
                                                {"startLine": 2, "startColumn": 32, "endLine": 2, "endColumn": 52}]
    assert before[0][1] != before[1][1]
    (repo / "train.py").write_text("import torch\n\n# a comment added above\n" + line)
    after = api101()
    assert [region["startLine"] for region, _ in after] == [4, 4]
    assert [fp for _, fp in after] == [fp for _, fp in before]


def test_identical_findings_are_numbered():
    result = ScanResult(root=str(FIXTURES / "code"), findings=[
        Finding("API101", Severity.BLOCKER, "same", Location(path="train.py", line=9)),
        Finding("API101", Severity.BLOCKER, "same", Location(path="train.py", line=9)),
    ], outlook=Verdict.MAC_FOR_DEV, limiting=[], files_scanned=1, lines_scanned=1, seconds=0.0)
    prints = [r["partialFingerprints"]["mpsready/v1"] for r in to_sarif(result)["runs"][0]["results"]]
    assert [p.split(":")[1] for p in prints] == ["1", "2"] and prints[0].split(":")[0] == prints[1].split(":")[0]


def test_columns_are_code_points_and_end_positions_come_from_the_finding(tmp_path):
    repo = make_repo(tmp_path, {"train.py": "import torch\nü = torch.zeros(2).cuda()\n"})
    regions = [r["locations"][0]["physicalLocation"]["region"]
               for r in sarif_of(repo)["runs"][0]["results"] if r["ruleId"] == "API101"]
    # ast says bytes 6 to 27 (just past the node): 'ü' is two UTF-8 bytes
    assert regions == [{"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 26}]
    result = ScanResult(root=str(repo), findings=[
        Finding("API101", Severity.BLOCKER, "m", Location(path="train.py", line=2, column=6, end_line=2,
                                                         end_column=27)),
    ], outlook=Verdict.MAC_FOR_DEV, limiting=[], files_scanned=1, lines_scanned=2, seconds=0.0)
    doc = to_sarif(result)
    validate(doc)
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 26}
    assert doc["runs"][0]["columnKind"] == "unicodeCodePoints"


def test_end_positions_come_from_the_syntax_tree_node(tmp_path):
    # a call spanning three lines, a keyword value, an import and a torch.cuda attribute chain: each region
    # ends just past its node (SARIF end columns are exclusive, in code points)
    source = ("import torch\n"
              "import apex\n"
              "model = torch.nn.Linear(\n"
              "    2, 2,\n"
              ").cuda()\n"
              "x = torch.zeros(2, device='cuda')\n"
              "torch.cuda.synchronize()\n")
    repo = make_repo(tmp_path, {"train.py": source, "requirements.txt": "torch\n"})
    doc = sarif_of(repo)
    validate(doc)
    regions = sorted((r["ruleId"], tuple(sorted(r["locations"][0]["physicalLocation"]["region"].items())))
                     for r in doc["runs"][0]["results"] if r["locations"][0]["physicalLocation"]["artifactLocation"]
                     ["uri"] == "train.py")
    assert regions == [
        ("API101", (("endColumn", 9), ("endLine", 5), ("startColumn", 9), ("startLine", 3))),
        ("API102", (("endColumn", 23), ("endLine", 7), ("startColumn", 1), ("startLine", 7))),
        ("API103", (("endColumn", 33), ("endLine", 6), ("startColumn", 27), ("startLine", 6))),
        ("DEP107", (("endColumn", 12), ("endLine", 2), ("startColumn", 1), ("startLine", 2))),
    ]


def test_parse_failures_are_tool_execution_notifications(tmp_path):
    repo = make_repo(tmp_path, {"bad.py": "def broken(:\n", "requirements.txt": "torch\n"})
    doc = sarif_of(repo)
    validate(doc)
    inv = doc["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is True
    assert inv["toolExecutionNotifications"] == [{
        "level": "warning",
        "message": {"text": "syntax error: invalid syntax (line 1, parsed as Python "
                            f"{sys.version_info.major}.{sys.version_info.minor}); not analysed."},
        "descriptor": {"id": "INP105"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "bad.py", "uriBaseId": "SRCROOT"},
                                            "region": {"startLine": 1, "startColumn": 12}}}],
    }]


def test_inline_suppressions_are_emitted_as_suppressed_results(tmp_path):
    repo = make_repo(tmp_path, {"train.py": "import torch\nx = torch.zeros(1).cuda()  # mpsready: ignore[API101]\n",
                                "requirements.txt": "torch\n"})
    result = scan_path(repo, ScanConfig())
    assert result.suppressed == 1 and [f.code for f in result.findings] == []
    doc = to_sarif(result)
    validate(doc)
    [res] = doc["runs"][0]["results"]
    assert res["ruleId"] == "API101"
    assert res["suppressions"] == [{"kind": "inSource", "justification": "# mpsready: ignore[...] comment on the line"}]
    assert res["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 5, "endLine": 2,
                                                                 "endColumn": 26}
    # --ignore drops it from the log entirely: a rule the user turned off is not a suppressed alert
    assert to_sarif(scan_path(repo, ScanConfig(ignore=("API",))))["runs"][0]["results"] == []


def test_several_paths_give_one_run_each_with_its_own_category(tmp_path):
    repo = make_repo(tmp_path, {"a/train.py": "import torch\ntorch.zeros(1).cuda()\n", "b/x.py": "print(1)\n"})
    doc = to_sarif_many([scan_path(repo / "a", ScanConfig()), scan_path(repo / "b", ScanConfig())])
    validate(doc)
    assert [r["automationDetails"]["id"] for r in doc["runs"]] == ["mpsready/a/", "mpsready/b/"]
    assert "automationDetails" not in to_sarif(scan_path(repo / "a", ScanConfig()))["runs"][0]


def test_percent_encoded_uri_stays_valid(tmp_path):
    repo = make_repo(tmp_path, {"my dir/tr#ain.py": "import torch\ntorch.zeros(1).cuda()\n"})
    doc = sarif_of(repo)
    validate(doc)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert "my%20dir/tr%23ain.py" in uris
    assert os.path.isfile(repo / "my dir" / "tr#ain.py")


def test_a_symlink_loop_finding_stays_on_the_link(tmp_path):
    repo = make_repo(tmp_path, {"pkg/a.py": "print(1)\n", "requirements.txt": "numpy\n"})
    os.symlink("..", repo / "pkg" / "loop")
    doc = sarif_of(repo)
    validate(doc)
    [res] = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "INP104"]
    assert res["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "pkg/loop", "uriBaseId": "SRCROOT"}, "region": {"startLine": 1}}

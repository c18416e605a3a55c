"""docs/ci.md and .pre-commit-hooks.yaml: their YAML parses and every command they contain runs as written
(all but the install line) on a sample repository, with the exit codes the jobs rely on."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
SCHEMA = json.loads((ROOT / "tests" / "scan" / "sarif_schema" / "sarif-schema-2.1.0.json").read_text())


def yaml_blocks() -> list:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", DOC, flags=re.S)]


def sample_repo(tmp_path: Path, fixture: str = "code") -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "tests" / "scan" / "fixtures" / fixture, repo)
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return repo


def run_line(line: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(line)
    assert argv[0] == "mpsready", line
    return subprocess.run([sys.executable, "-m", "mpsready", *argv[1:], "--no-cache"], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def runnable(lines: list[str]) -> list[str]:
    """The commands a job runs, less the install (no network here; the package is installed already)."""
    assert lines[0].startswith('pip install "mpsready @ git+https://github.com/mpsready/mpsready"')
    return lines[1:]


def test_github_workflow_uploads_sarif_and_gates(tmp_path):
    github = yaml_blocks()[0]
    steps = github["jobs"]["mpsready"]["steps"]
    assert github["permissions"] == {"contents": "read", "security-events": "write"}
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"] == {"sarif_file": "mpsready.sarif", "category": "mpsready"}
    commands = runnable([s["run"] for s in steps if "run" in s])
    assert commands == ["mpsready scan . --format sarif --output mpsready.sarif --exit-zero",
                        "mpsready scan . --format github --fail-on blocker"]
    repo = sample_repo(tmp_path)
    codes = []
    for line in commands:
        proc = run_line(line, repo)
        codes.append(proc.returncode)
        if "--format github" in line:
            assert [x for x in proc.stdout.splitlines() if x.startswith("::error file=train.py,line=9,")] == [
                "::error file=train.py,line=9,col=9,endLine=9,endColumn=37,title=API101 dot-cuda-call::.cuda() moves to CUDA; on a Mac it "
                "raises 'Torch not compiled with CUDA enabled'. Fix: Pick a device once (`device = "
                "torch.accelerator.current_accelerator()` or an MPS-aware selection) and use `.to(device)`."]
    assert codes == [0, 1]  # the upload step never fails; the gate fails on the fixture's blockers
    sarif = json.loads((repo / upload["with"]["sarif_file"]).read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    assert "automationDetails" not in sarif["runs"][0]  # one path: the workflow's category applies
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]} \
        <= {p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()}


def test_gitlab_job_keeps_artifacts_and_gates(tmp_path):
    gitlab = yaml_blocks()[1]["mpsready"]
    assert gitlab["artifacts"] == {"when": "always", "paths": ["mpsready-scan.json", "mpsready.sarif"]}
    commands = runnable(gitlab["script"])
    repo = sample_repo(tmp_path)
    assert [run_line(line, repo).returncode for line in commands] == [0, 0, 1]
    for artifact in gitlab["artifacts"]["paths"]:
        assert (repo / artifact).is_file()
    assert json.loads((repo / "mpsready-scan.json").read_text())["outlook"]["verdict"] == "mac_for_dev"


def test_pre_commit_hook_runs_as_declared(tmp_path):
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["language"], hook["pass_filenames"]) == ("mpsready-scan", "python", False)
    files = re.compile(hook["files"])
    assert [bool(files.search(p)) for p in ("train.py", "requirements.txt", "env/environment.yml", "csrc/k.cu",
                                            "docker/Dockerfile.gpu", "README.md", "img/logo.png")] == \
        [True, True, True, True, True, False, False]
    line = " ".join([hook["entry"], *hook["args"]])
    assert run_line(line, sample_repo(tmp_path)).returncode == 1
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "requirements.txt").write_text("numpy\n")
    assert run_line(line, clean).returncode == 0
    config = yaml_blocks()[2]
    [documented] = config["repos"][0]["hooks"]
    assert documented["id"] == hook["id"]
    # no release is tagged: the documented rev must be a full commit id, never a tag that does not exist
    assert re.fullmatch(r"[0-9a-f]{40}", str(config["repos"][0]["rev"]))
    # the documented args run as written (the baseline file written first, as the adoption path says)
    repo = sample_repo(tmp_path / "adopt")
    assert run_line("mpsready scan . --write-baseline mpsready-baseline.json", repo).returncode == 0
    assert run_line(" ".join([hook["entry"], *documented["args"]]), repo).returncode == 0

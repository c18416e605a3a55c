"""Issue 35: ``--verify`` on a project whose CPU run differs from itself run to run runs the original twice and says
whether the migrated run is within that spread (a seeded and an unseeded fixture). The emulated Mac's answers are
predictions, not observations of a Mac."""

from pathlib import Path

from mpsready.migrate.engine import migrate_path
from mpsready.migrate.verify import CpuRun, VerifyResult, _within, render_verify, verify_plan
from mpsready.scan import ScanConfig

CONFIG = ScanConfig(cache_dir=None)
TRAIN = '''import os

import torch

{seed}
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(8)]).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.ones(3, 4).to(device)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
'''


def _verify(tmp_path: Path, seed: str, lines: list[str]):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "train.py").write_text(TRAIN.format(seed=seed))
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [e.code for fp in plan.files for e in fp.edits] == ["API104"]
    # no emulated Mac here (tests/migrate/test_mac_projects.py runs it): the CPU comparison is what is tested
    return verify_plan(plan, ["python", "train.py"], releases=[], max_steps=2, time_limit=120, say=lines.append)


def test_a_seeded_project_is_compared_once(tmp_path):
    lines: list[str] = []
    result = _verify(tmp_path, "torch.manual_seed(1)", lines)
    assert result.same_cpu_numbers and result.original_again is None and result.cpu_agrees
    assert lines == ["verify: CPU run 1/2: the original (python train.py)", "verify: CPU run 2/2: the migrated copy"]


# an initialisation that differs per process: each run takes the next seed of a counter outside the copies (so the
# test is deterministic: the original's first run draws 1, the migrated copy 2, the original's second run 3)
COUNTER = """path = os.environ["H35_COUNTER"]
n = int(open(path).read()) + 1 if os.path.exists(path) else 1
open(path, "w").write(str(n))
torch.manual_seed(n)"""


def test_an_unseeded_project_is_judged_against_its_own_spread(tmp_path, monkeypatch):
    monkeypatch.setenv("H35_COUNTER", str(tmp_path / "counter"))
    lines: list[str] = []
    result = _verify(tmp_path / "p", COUNTER, lines)
    assert not result.same_cpu_numbers  # each process draws its own initial weights
    assert result.original_again is not None and result.original_varies
    assert result.within_spread and result.cpu_agrees
    assert (tmp_path / "counter").read_text() == "3"
    assert lines[2] == "verify: the CPU runs differ: running the original again to learn its own run-to-run spread"
    text = render_verify(result)
    assert "  CPU: within the original's own run-to-run spread (" in text
    assert result.to_dict()["original_run_to_run"]["migrated_within_spread"] is True


def _run(*norms: float) -> CpuRun:
    return CpuRun(0, "", "", steps=2, parameters=len(norms), sha256=str(norms), norms=list(norms))


def test_the_spread_is_per_parameter():
    a, b = _run(1.0, 2.0), _run(1.5, 2.0)
    assert _within(a, b, _run(1.2, 2.0))
    assert _within(a, b, _run(3.0, 2.0))  # 1.5 from b: three times the originals' distance of 0.5
    assert not _within(a, b, _run(3.01, 2.0))
    assert _within(a, b, _run(1.5, 3.5)) and not _within(a, b, _run(1.5, 3.6))  # Euclidean over the parameters
    result = VerifyResult(["python", "t.py"], a, _run(9.0, 2.0), original_again=b)
    assert result.original_varies and not result.within_spread and not result.cpu_agrees
    assert "the original itself differs run to run, and the migrated run is outside that spread" in render_verify(result)

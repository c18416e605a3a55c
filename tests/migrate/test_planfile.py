"""Planning per file: the same plan from a process pool, and a file too large or too slow left as it is."""

import itertools
import json

import pytest

from mpsready.migrate import planfile
from mpsready.migrate.engine import migrate_path
from mpsready.migrate.formats import render_diff, render_json
from mpsready.migrate.interface import MigrateError
from mpsready.migrate.source import migrate_source
from mpsready.migrate.transforms import all_transforms
from mpsready.scan import ScanConfig

TRAIN = ("import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
         "model = torch.nn.Linear(2, 2).cuda()\nx = torch.zeros(2, device='cuda')\ntorch.cuda.synchronize()\n")


def test_a_pool_plans_the_same_as_one_process(tmp_path):
    for i in range(planfile.POOL_MIN_FILES + 2):
        (tmp_path / f"m{i:03d}.py").write_text(TRAIN if i % 2 else "import os\nprint(os.sep)\n")
    one = migrate_path(tmp_path, config=ScanConfig(cache_dir=None, jobs=1))
    pool = migrate_path(tmp_path, config=ScanConfig(cache_dir=None, jobs=2))
    assert one.edits == 4 * 33 and len(one.files) == 33
    # "created" is the clock's second: two renders a second apart differed in CI (stop 28), the plans did not
    docs = [json.loads(render_json(plan)) for plan in (pool, one)]
    assert all(doc.pop("created") for doc in docs)
    assert (docs[0], render_diff(pool)) == (docs[1], render_diff(one))


def test_a_file_over_its_time_limit_is_listed_and_its_findings_are_manual(tmp_path):
    (tmp_path / "slow.py").write_text(TRAIN)
    (tmp_path / "fine.py").write_text(TRAIN)
    plan = migrate_path(tmp_path, config=ScanConfig(cache_dir=None), file_time_limit=-1.0)
    assert plan.errors == ["fine.py: planning took longer than -1 s (the per-file limit); left as it is",
                           "slow.py: planning took longer than -1 s (the per-file limit); left as it is"]
    assert plan.files == [] and {m.reason for m in plan.manual} == {
        "left as it is: the file was not parsed (see 'not parsed')"}


def test_the_time_limit_is_checked_after_the_parse_and_each_transform():
    ticks = itertools.count()
    with pytest.raises(MigrateError, match=r"^a.py: planning took longer than 0.5 s"):  # the check after the parse
        migrate_source(TRAIN, "a.py", [], all_transforms(), time_limit=0.5, clock=lambda: float(next(ticks)))
    assert migrate_source(TRAIN, "a.py", [], all_transforms(), time_limit=1e9).text == TRAIN


def test_a_file_over_the_size_limit_is_not_read(tmp_path):
    (tmp_path / "big.py").write_text(TRAIN + "#" * 100 + "\n")  # (a tree's walk leaves such a file out already)
    plan = migrate_path(tmp_path / "big.py", config=ScanConfig(cache_dir=None, max_file_size=len(TRAIN) + 10))
    assert plan.errors == [f"big.py: above the {len(TRAIN) + 10}-byte limit (--max-file-size); not read"]

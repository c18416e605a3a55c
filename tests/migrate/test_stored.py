"""``migrate PATH --apply`` writes the plan ``migrate PATH`` showed without planning again when nothing it was
planned from changed, and plans again (saying why) when anything did (:mod:`mpsready.migrate.stored`)."""

import json

import pytest

import mpsready.migrate.engine as engine
from mpsready.cli import main
from mpsready.migrate import stored

SOURCE = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()  # keep me\n"
MIGRATED_LINE = "model = torch.nn.Linear(2, 2).to(_mpsready_device())  # keep me\n"
REUSED = "no file it was planned from, --select/--ignore or version changed since); not planned again"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "train.py").write_text(SOURCE)
    (root / "clean.py").write_text("import torch\nx = torch.ones(1)\n")
    return root


@pytest.fixture
def plans(monkeypatch):
    """Counts the plans made (the CLI imports ``migrate_path`` from the engine when it runs)."""
    calls: list[str] = []
    real = engine.migrate_path

    def counted(path, **kw):
        calls.append(str(path))
        return real(path, **kw)

    monkeypatch.setattr(engine, "migrate_path", counted)
    return calls


def _show(root, capsys, *extra):
    assert main(["migrate", str(root), *extra]) == 0
    return capsys.readouterr()


EFFORT = ("  migrate effort (plan): {} auto-fixable finding(s) in {} file(s) (`mpsready migrate PATH` shows the diff), "
          "0 manual, 0 need no change")


def test_apply_after_show_does_not_plan_again_and_writes_the_plan_shown(project, capsys, plans):
    shown = _show(project, capsys).out
    assert len(plans) == 1
    assert main(["migrate", str(project), "--apply"]) == 0
    err = capsys.readouterr().err
    assert len(plans) == 1  # no second planning
    assert err.splitlines()[0].startswith("mpsready migrate: applying the plan shown at ")
    assert err.splitlines()[0].endswith(REUSED)
    assert err.splitlines()[1:] == [
        "mpsready migrate: 1 edit in 1 file (API101 1) fixing 1 scan finding(s); 0 manual entries, 0 left as they are; "
        "PyTorch floor not declared", EFFORT.format(1, 1), "written: 1 file: train.py"]
    assert "+" + MIGRATED_LINE in shown
    assert MIGRATED_LINE in (project / "train.py").read_text()
    assert (project / "clean.py").read_text() == "import torch\nx = torch.ones(1)\n"


def test_the_reused_plan_renders_as_a_fresh_one(project, capsys, plans, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for p in project.iterdir():
        (copy / p.name).write_bytes(p.read_bytes())
    _show(project, capsys)
    assert main(["migrate", str(project), "--apply", "--format", "json"]) == 0
    reused = json.loads(capsys.readouterr().out)
    assert main(["migrate", str(copy), "--apply", "--format", "json", "--no-cache"]) == 0
    fresh = json.loads(capsys.readouterr().out)
    assert len(plans) == 2  # the show of project, the fresh plan of copy
    for doc in (reused, fresh):
        del doc["created"], doc["root"]
    assert reused == fresh
    assert (project / "train.py").read_text() == (copy / "train.py").read_text()


def test_an_edited_file_plans_again_and_says_which(project, capsys, plans):
    _show(project, capsys)
    (project / "clean.py").write_text("import torch\ny = torch.ones(1).cuda()\n")  # not in the plan shown
    assert main(["migrate", str(project), "--apply"]) == 0
    err = capsys.readouterr().err
    assert len(plans) == 2
    assert err.splitlines()[0] == "mpsready migrate: planning again: clean.py changed since the plan was shown"
    assert "written: 2 files: clean.py, train.py" in err
    assert "torch.ones(1).to(_mpsready_device())" in (project / "clean.py").read_text()


def test_an_added_or_removed_file_plans_again(project, capsys, plans):
    _show(project, capsys)
    (project / "requirements.txt").write_text("torch>=2.4\n")  # the PyTorch floor the plan reads
    assert main(["migrate", str(project), "--apply"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "mpsready migrate: planning again: requirements.txt is new since the plan was shown"
    assert "PyTorch floor 2.4" in err
    (project / "train.py").write_text(SOURCE)
    _show(project, capsys)
    (project / "clean.py").unlink()
    assert main(["migrate", str(project), "--apply"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == \
        "mpsready migrate: planning again: clean.py is gone since the plan was shown"
    assert len(plans) == 4


def test_another_select_plans_again(project, capsys, plans):
    _show(project, capsys, "--select", "API101")
    assert main(["migrate", str(project), "--apply", "--select", "API102"]) == 0
    err = capsys.readouterr().err
    assert len(plans) == 2
    assert err.splitlines()[0] == ("mpsready migrate: planning again: --select API102 differs from the plan "
                                   "shown's (API101)")
    assert "written: 0 files" in err
    assert (project / "train.py").read_text() == SOURCE


def test_another_version_plans_again(project, capsys, plans, monkeypatch):
    _show(project, capsys)
    monkeypatch.setattr(stored, "__version__", "0.0.0-other")
    assert main(["migrate", str(project), "--apply"]) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("mpsready migrate: planning again: the plan was shown by another mpsready version (")
    assert first.endswith(" against 0.0.0-other)")
    assert len(plans) == 2


def test_apply_forgets_the_plan_and_a_second_apply_plans_quietly(project, capsys, plans, tmp_path):
    _show(project, capsys)
    assert main(["migrate", str(project), "--apply"]) == 0
    capsys.readouterr()
    assert main(["migrate", str(project), "--apply"]) == 0
    err = capsys.readouterr().err
    assert len(plans) == 2
    assert err.splitlines() == ["mpsready migrate: 0 edits in 0 files (none) fixing 0 scan finding(s); 0 manual "
                                "entries, 0 left as they are; PyTorch floor not declared", EFFORT.format(0, 0),
                                "written: 0 files"]


def test_no_cache_neither_stores_nor_reuses(project, capsys, plans, tmp_path):
    cache = tmp_path / "c"
    _show(project, capsys, "--cache-dir", str(cache), "--no-cache")
    assert not cache.exists()
    _show(project, capsys, "--cache-dir", str(cache))
    assert sorted(p.name for p in cache.iterdir()) == sorted([stored.store_path(cache, project).name, "secret"])
    assert main(["migrate", str(project), "--apply", "--no-cache"]) == 0
    assert len(plans) == 3


def test_a_file_changed_after_the_check_is_still_refused(project, capsys, plans, monkeypatch):
    _show(project, capsys)
    import mpsready.migrate.apply as apply_mod

    real = apply_mod.apply_plan

    def racing(plan, **kw):
        (project / "train.py").write_text("changed\n")  # between the reuse check and the write
        return real(plan, **kw)

    monkeypatch.setattr(apply_mod, "apply_plan", racing)
    assert main(["migrate", str(project), "--apply"]) == 1
    err = capsys.readouterr().err
    assert len(plans) == 1
    assert "refused: train.py: changed since the scan; not touched (run mpsready migrate again)" in err
    assert (project / "train.py").read_text() == "changed\n"


def test_a_damaged_or_foreign_plan_plans_again(project, capsys, plans, tmp_path):
    cache = tmp_path / "c"
    _show(project, capsys, "--cache-dir", str(cache))
    path = stored.store_path(cache, project)
    from mpsready import cachefiles

    key = cachefiles.secret(cache)
    doc = json.loads(cachefiles.unseal(key, path.read_bytes()))
    doc["plan"]["files"][0]["path"] = "../outside.py"  # a plan may name only the project's files
    path.write_bytes(cachefiles.seal(key, json.dumps(doc).encode()))  # even one sealed with the user's key
    assert main(["migrate", str(project), "--apply", "--cache-dir", str(cache)]) == 0
    assert capsys.readouterr().err.splitlines()[0] == \
        "mpsready migrate: planning again: the stored plan could not be read"
    assert not (tmp_path / "outside.py").exists()
    _show(project, capsys, "--cache-dir", str(cache))
    path.write_bytes(cachefiles.seal(key, b"{not json"))
    assert main(["migrate", str(project), "--apply", "--cache-dir", str(cache)]) == 0
    assert capsys.readouterr().err.splitlines()[0] == \
        "mpsready migrate: planning again: the stored plan could not be read"
    assert len(plans) == 4

"""Planning a file leaves nothing of its syntax tree for the cyclic garbage collector: the tree, the index and
the file context go as soon as the file is planned (reference counting), so the collector's passes do not walk
one dead tree after another (issue 25: those passes were about a fifth of migrate's CPU time on the synthetic
tree of ``benchmarks/migrate_bench.py``). A visitor or transformer class made inside a function, or an object
that refers to its owner, puts the tree back in a reference cycle and fails this test."""

import gc
from pathlib import Path

import libcst as cst
import pytest

from mpsready.migrate.engine import migrate_path
from mpsready.migrate.index import index

HERE = Path(__file__).parent
PATHS = sorted(p.name for p in (HERE / "fixtures").iterdir()) + [
    f"../projects/{p.name}" for p in sorted((HERE / "projects").iterdir())]


def _cyclic_garbage(fn) -> list:
    """The objects only the cyclic collector would free after ``fn()``."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        fn()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    return found


@pytest.mark.parametrize("path", PATHS)
def test_planning_a_fixture_leaves_no_tree_in_a_cycle(path):
    garbage = _cyclic_garbage(lambda: migrate_path(HERE / "fixtures" / path))
    nodes = [o for o in garbage if isinstance(o, cst.CSTNode)]
    assert nodes == []


def test_the_index_alone_is_freed_by_reference_counting():
    module = cst.parse_module("import torch\nx = torch.ones(3).cuda()\n")
    garbage = _cyclic_garbage(lambda: index(module))
    assert [o for o in garbage if type(o).__module__.startswith(("libcst", "mpsready"))] == []


def test_the_check_sees_a_tree_in_a_cycle():
    """The test above can fail: a tree held by a class made in a function is reported."""
    def plan_with_local_class() -> None:
        module = cst.parse_module("x = 1\n")

        class Holder:
            tree = module

        Holder.self = Holder  # type: ignore[attr-defined]

    garbage = _cyclic_garbage(plan_with_local_class)
    assert any(isinstance(o, cst.Module) for o in garbage)


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_collector_is_paused_while_a_file_is_planned_and_restored_after(monkeypatch, enabled_before):
    import mpsready.migrate.source as source

    seen = []
    real = source.migrate_source

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(source, "migrate_source", recording)
    was = gc.isenabled()
    (gc.enable if enabled_before else gc.disable)()
    try:
        plan = migrate_path(HERE / "fixtures" / "api101_dot_cuda.py")
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    # one file, planned in round 1 only: round 2 (which changes nothing) carries round 1's records (issue 35 item 4)
    assert plan.files and seen == [False]
    assert plan.rounds == 2
    assert after is enabled_before

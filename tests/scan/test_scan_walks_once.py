"""Issue 32 (speed): the reach by calls walks each definition once for both of its reaches, and its walks give the
same names, first lines and order as the ``ast.walk``/``ast.iter_child_nodes`` walks they replace. Fixtures written
for these tests."""

from __future__ import annotations

import ast

from mpsready.scan.model.reach_walk import ReachMemo, loads, names_any, statements, summarise

SRC = '''\
def run(cfg, x):
    y = helper(x)
    if cfg.fast:
        z = fast_path(y)
        obj.tune(z)
    else:
        z = slow_path(y, "compile")
        helper(z)
    out = [finish(v) for v in z]
    f = lambda q: late(q)
    obj.tune
    return out
'''


class _Side:
    """Guards that skip one fixed side of every ``if`` and record which tests they were asked about."""

    def __init__(self, side):
        self.side, self.asked = side, []

    def skip(self, rel, node, fn):
        self.asked.append((rel, node.lineno, fn.name if fn is not None and hasattr(fn, "name") else fn))
        return self.side


def _body():
    return ast.parse(SRC).body[0]


def test_unguarded_loads_give_each_name_its_first_line_in_walk_order():
    fn = _body()
    (bare, other), every = loads(fn.body, "m.py", fn)
    assert every is None
    # the values and order the earlier walk (a stack over ast.iter_child_nodes) gave on this fixture
    assert list(bare.items()) == [("out", 12), ("obj", 5), ("q", 10), ("late", 10), ("z", 5), ("v", 9),
                                  ("finish", 9), ("helper", 2), ("y", 4), ("slow_path", 7), ("fast_path", 4),
                                  ("cfg", 3), ("x", 2)]
    assert list(other.items()) == [("tune", 5), ("compile", 7), ("fast", 3)]


def test_a_guarded_walk_drops_the_skipped_side_and_keeps_the_unguarded_answer_beside_it():
    fn = _body()
    guards = _Side("body")  # `if cfg.fast:` never entered: fast_path and line 5's tune are on the skipped side
    (bare, other), every = loads(fn.body, "m.py", fn, guards, unguarded=True)
    assert list(bare.items()) == [("out", 12), ("obj", 11), ("q", 10), ("late", 10), ("z", 8), ("v", 9),
                                  ("finish", 9), ("helper", 2), ("y", 7), ("slow_path", 7), ("cfg", 3), ("x", 2)]
    assert list(other.items()) == [("tune", 11), ("compile", 7), ("fast", 3)]
    assert guards.asked == [("m.py", 3, "run")]
    assert every == loads(fn.body, "m.py", fn)[0]  # what a walk without guards gives
    assert [list(d.items()) for d in every] == [list(d.items()) for d in loads(fn.body, "m.py", fn)[0]]


def test_a_guarded_walk_alone_asks_the_same_tests_and_gives_the_same_names():
    fn = _body()
    alone, both = _Side("orelse"), _Side("orelse")
    first, none = loads(fn.body, "m.py", fn, alone)
    second, _every = loads(fn.body, "m.py", fn, both, unguarded=True)
    assert none is None
    assert [list(d.items()) for d in first] == [list(d.items()) for d in second]
    assert list(first[0]) == ["out", "obj", "q", "late", "z", "v", "finish", "y", "fast_path", "cfg", "x", "helper"]
    assert alone.asked == both.asked == [("m.py", 3, "run")]


def test_summary_keeps_the_later_import_of_an_alias_in_breadth_first_order():
    tree = ast.parse("def f():\n    from b import two as name\n\nfrom a import one as name\nfrom c import *\n"
                     "class K:\n    def m(self):\n        def inner():\n            pass\n")
    s = summarise(tree)
    # ast.walk reaches the module's import before the one inside f(), so the nested one is the later: it wins
    assert s.imported == {"name": "two"}
    assert s.star is True
    assert s.defs == frozenset({"f", "K", "m", "inner"})


def test_statements_and_names_any_see_every_nested_statement_and_name():
    tree = ast.parse("try:\n    import x\nexcept ImportError:\n    class A:\n        def g(self):\n"
                     "            return h.k(1)\nmatch v:\n    case 1:\n        class B:\n            pass\n")
    assert sorted(n.name for n in statements(tree) if isinstance(n, ast.ClassDef)) == ["A", "B"]
    assert names_any(tree.body, frozenset({"k"})) is True
    assert names_any(tree.body, frozenset({"h"})) is True
    assert names_any(tree.body, frozenset({"g"})) is False  # a definition's own name is no reference


def test_memo_starts_empty():
    memo = ReachMemo()
    assert (memo.summaries, memo.loads) == ({}, {})


# ---------------------------------------------------------------- run-time imports: one walk, the same records
DYNAMIC = '''
import importlib
def outer(prefix="pkg.a."):
    importlib.import_module(prefix + x)
    def inner(prefix="pkg.b."):
        importlib.import_module(prefix + y)
        return lambda: import_module(prefix + z)
    class K:
        def m(self, p="pkg.c."):
            import_module(p + q)
    import_module(f"pkg.d.{w}")
import_module("pkg.e." + v)
@deco(import_module(prefix + "x"))
def dec(prefix="pkg.f."):
    pass
'''


def test_run_time_imports_are_judged_by_the_innermost_function_and_keep_their_order():
    from mpsready.scan.code.dynamic_imports import dynamic_imports

    got = [(r.module, r.names, r.line) for r in dynamic_imports(ast.parse(DYNAMIC))]
    # innermost functions first (reverse ast.walk order), each one's calls in walk order; a decorator's call is
    # judged with its function's defaults (`prefix` of dec), a lambda's with the function around it
    assert got == [("pkg.c", ("**",), 10), ("pkg.b", ("**",), 6), ("pkg.b", ("**",), 7), ("pkg.f", ("**",), 13),
                   ("pkg.a", ("**",), 4), ("pkg.d", ("**",), 11), ("pkg.e", ("**",), 12)]


# ---------------------------------------------------------------- no cycle keeps a file's tree to the end
MARK = "marker-of-this-fixture"
CYCLE_SRC = ("import torch\n\n\ndef main(x):\n    if torch.cuda.is_available():\n        import apex\n"
             "        x = x.cuda()\n    dev = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
             f"    return x.to(dev), {MARK!r}\n")


def test_analysing_a_file_leaves_no_cycle_holding_its_tree():
    import gc

    from mpsready.scan.code.analyzer import analyze_source

    gc.collect()
    gc.disable()  # as during a scan (engine.gc_paused): only reference counting frees the tree
    try:
        r = analyze_source(CYCLE_SRC)
        left = sum(1 for o in gc.get_objects() if isinstance(o, ast.Constant) and o.value == MARK)
    finally:
        gc.enable()
    assert left == 0
    # the findings are those of the analysis as before (the Mac-facts evaluation ran: the import is skipped)
    assert [(f["code"], f["line"]) for f in r.findings] == [("DEP107", 6), ("API101", 7), ("API104", 8)]
    assert r.skipped_imports == {"6": "torch.cuda.is_available() is False (line 5): torch.cuda.is_available() is False"}


PRUNED = '''
import importlib
def setup(kind, prefix="pkg.g."):
    if kind:
        return importlib.\\
            import_module(prefix + kind)
    x = [1, 2, 3]
    return x
def other(prefix="pkg.h."):
    y = f"{import_module(prefix + 'k')}"
    return ｉmport_module(prefix + y)
'''


def test_the_walk_entered_only_where_import_module_is_named_finds_the_same_records():
    """With the text, the walk enters only the nodes spanning a line naming ``import_module`` (a call continued
    over two lines, one inside an f-string, one spelt with a fullwidth letter that ``ast`` normalises): the same
    records, in the same order, as the walk of every node."""
    from mpsready.scan.code.dynamic_imports import dynamic_imports

    for text in (DYNAMIC, PRUNED):
        tree = ast.parse(text)
        whole = [(r.module, r.names, r.line) for r in dynamic_imports(tree)]
        assert [(r.module, r.names, r.line) for r in dynamic_imports(tree, text)] == whole
    # innermost function first: other before setup; in other, the return's call is nearer the top than the f-string's
    assert whole == [("pkg.h", ("**",), 11), ("pkg.h", ("**",), 10), ("pkg.g", ("**",), 5)]

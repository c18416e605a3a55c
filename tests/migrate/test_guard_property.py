"""The nesting guard counts every construct that deepens libcst's tree (issue 34 item 7): a property test over
random nests of them. ``lambda: lambda: ... 0`` used to pass the guard (a lambda's colon reset the estimate to
3) and exhaust libcst's memory."""

from hypothesis import given, settings
from hypothesis import strategies as st

from mpsready.migrate.engine import migrate_path
from mpsready.migrate.guard import LIMIT, bound, nesting

# each wraps one expression in one more level of the tree libcst builds
WRAPPERS = ["lambda: {}", "lambda x, y=1: {}", "({})", "[{}]", "{{{}}}", "f({})", "x[{}]", "not {}", "-{}",
            "a + {}", "{} if c else d", "c if {} else d", "await {}", "{{k: {}}}", "x if c else {}",
            "(yield {})", "[{} for i in y]", "{} or z"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WRAPPERS), min_size=1, max_size=60))
def test_every_level_counts_at_least_one(chain):
    expr = "0"
    for w in chain:
        expr = w.format(expr)
    text = f"v = {expr}\n"
    estimate, line = nesting(text)
    assert estimate >= len(chain) and line == 1
    b = bound(text)
    assert b is None or b >= estimate  # the fast bound stays an upper bound


def test_a_chain_of_3000_lambdas_is_refused_before_libcst(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nf = " + "lambda: " * 3000 + "0\nx = torch.ones(1).cuda()\n")
    plan = migrate_path(tmp_path)
    assert plan.errors == [f"a.py: nested too deeply to parse safely (estimate 12003 at line 2, limit {LIMIT})"]


def test_a_dispatch_table_of_many_lambdas_is_not_deep():
    table = "ops = {" + ", ".join(f"'k{i}': lambda x, y: x + y" for i in range(500)) + "}\n"
    assert nesting(table)[0] < 20

"""The cheap bound that lets migrate skip the tokenize nesting estimate (:func:`mpsready.migrate.guard.bound`)
is never below the estimate, gives no bound where tokenize would read the text differently, and leaves every
refusal as it was."""

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpsready.migrate.guard import LIMIT, bound, check_nesting, nesting
from mpsready.migrate.interface import MigrateError

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="no bound on 3.12+ (tokenize splits f-strings)")

PIECES = ["(", ")", "[", "]", "{", "}", "a", " + ", ", ", ":", ";", "\n", "\\\n", "    ", "\t", "'s'", '"d"',
          "'''t\n'''", '"""u\n"""', "#c\n", "elif ", "else", "if x:\n", "f'{a}'", "\r\n", "r'\\''", "'a\\\nb'",
          "b'\\\\'", "!=", "...", "->", ":=", "é", "x\\\r\n", "a.b.c.d", " or ", "\n    elif y:\n", "\f", "''''a'''",
          "'''", '""', "$", "?", "\x0b", "\r", "!"]


@pytest.mark.parametrize(("text", "expected"), [
    ("x = 1\n", 3),  # x, =, 1: one character each
    ("y = (1 +\n      2)\n", 5 * 1 + 7 + 5 * 1),  # one group of two lines: 1 opening, 7 characters; 1 indent
    ('a = """doc\n(((\n"""\nb = 2\n', 3),  # the string is one character: its brackets are not counted
    ("if a:\n    b = 1\nelif c:\n    d = 2\n", 6 + 5 * 1 + 2 * 1),  # `elifc:` 6 characters, one indent, one elif
    ("x = 1 + \\\n  2\n", 6 + 5),  # a backslash continues the group
])
def test_the_bound_counts_as_documented(text, expected):
    assert bound(text) == expected
    assert bound(text) >= nesting(text)[0]


@pytest.mark.parametrize("text", ["x = 'unterminated\n", "x = 1 $ 2\n", "a = b ? c\n", "x = 1\r y\n", "p = \\ q\n",
                                  "x =\x0b1\n"])
def test_no_bound_where_tokenize_reads_otherwise(text):
    assert bound(text) is None  # tokenize writes blanks as tokens before such characters, or errs


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=150))
def test_the_bound_is_never_below_the_estimate(parts):
    text = "".join(parts)
    b = bound(text)
    assert b is None or b >= nesting(text)[0]


def test_every_hostile_refusal_is_unchanged():
    deep = "x = " + "(" * 300 + ")" * 300 + "\n"
    chain = "x = " + " + ".join(["a"] * 2000) + "\n"
    for text in (deep, chain):
        assert bound(text) > LIMIT  # no proof: the estimate decides, as before
        with pytest.raises(MigrateError, match="nested too deeply to parse safely"):
            check_nesting(text, "t.py")


def test_the_fixtures_are_proved_shallow_without_the_estimate():
    here = Path(__file__).parent / "fixtures"
    texts = [p.read_text() for p in sorted(here.rglob("*.py"))]
    assert len(texts) > 10
    assert all(nesting(t)[0] <= bound(t) <= LIMIT for t in texts)

"""Property: every reader is total on any input (issue 14). Each reader gets arbitrary text and mutated
seeds of its own format (hostile fragments included: 5,000-digit ints, deep brackets, long dotted keys,
YAML aliases); it may raise only its documented input error. Bounded for CI (derandomized, about 150
inputs per reader, well under two minutes on two cores); ``scripts/fuzz_long.py`` runs 100,000 per reader."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.fuzz.targets import all_targets, mutate  # noqa: E402

TARGETS = {t.name: t for t in all_targets()}
CI = settings(max_examples=150, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))


def check(target, text: str) -> None:
    try:
        target.run(text)
    except target.allowed:
        pass


@pytest.mark.parametrize("name", sorted(TARGETS))
@CI
@given(rng=st.randoms(use_true_random=False), plain=st.text(max_size=300), which=st.booleans())
def test_reader_is_total(name, rng, plain, which):
    target = TARGETS[name]
    check(target, mutate(rng, target) if which else plain)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_reader_accepts_its_own_seeds(name):
    target = TARGETS[name]
    for seed in target.seeds:
        target.run(seed)  # the seeds are valid input: no error at all, allowed or not


@CI
@given(st.lists(st.sampled_from(list("ab =-.;&|\t\n/$:") + ["pip", "install", "&&", "é"]), max_size=40).map("".join))
def test_plain_split_is_what_shlex_gives(text):
    import shlex

    from mpsready.scan.sources.shell import _plain_words

    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    assert _plain_words(text) == list(lexer)

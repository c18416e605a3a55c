"""Pairing the tensors of two records, and saying clearly what could not be paired.

Tensors pair by ``(step, key)``; a key already carries the module path and the call
index (``activation:encoder.layer.0#1``). What is left over is explained, most specific
first: a module called a different number of times, a tensor present on both sides under
another name at the same place (same kind, position, shape and module type: probably a
renamed module), then plain "only in A" / "only in B" (a missing layer). Steps present on
one side only and stages whose status differs are reported too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

# Kinds in the order the step produces them; gradients then parameters come after the forward pass.
PHASE = {"input": 0, "activation": 1, "output": 2, "loss": 3, "grad": 4, "param": 5}


def sort_key(e: Any) -> tuple[int, int, int, str]:
    """Execution order: step, then forward kinds, then gradients in backward order, then params."""
    return (e.step, PHASE.get(e.kind, 9), e.order, e.key)


def base_name(entry: Any) -> str:
    """The module path without the ``#N`` call index."""
    return entry.name.split("#", 1)[0]


@dataclass
class StructureIssue:
    """Something that could not be matched. ``type`` is one of ``call_count``, ``renamed``,
    ``only_in_a``, ``only_in_b``, ``shape``, ``steps``, ``stage``, ``inputs`` (synthetic inputs on one
    side only), ``empty`` (nothing in common), ``reference`` (the reference C matches none of A's tensors)."""

    type: str
    message: str
    keys_a: list[str] = field(default_factory=list)
    keys_b: list[str] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "keys_a": self.keys_a, "keys_b": self.keys_b,
                "steps": self.steps}


def _steps_text(steps: Iterable[int]) -> str:
    s = sorted(set(steps))
    if len(s) == 1:
        return f"step {s[0]}"
    if s == list(range(s[0], s[-1] + 1)):
        return f"steps {s[0]}-{s[-1]}"
    return "steps " + ", ".join(map(str, s))


def match_entries(entries_a: Iterable[Any], entries_b: Iterable[Any]) -> tuple[list[tuple[Any, Any]], list[StructureIssue]]:
    """Pairs ``(entry_a, entry_b)`` in A's execution order and the issues for the rest."""
    a = {(e.step, e.key): e for e in entries_a}
    b = {(e.step, e.key): e for e in entries_b}
    pairs = [(a[k], b[k]) for k in sorted(a.keys() & b.keys(), key=lambda k: sort_key(a[k]))]
    only_a = sorted((a[k] for k in a.keys() - b.keys()), key=sort_key)
    only_b = sorted((b[k] for k in b.keys() - a.keys()), key=sort_key)
    issues: list[StructureIssue] = []

    steps_a = {e.step for e in a.values()}
    steps_b = {e.step for e in b.values()}
    if steps_a - steps_b:
        issues.append(StructureIssue("steps", f"{_steps_text(steps_a - steps_b)} recorded in A only",
                                     steps=sorted(steps_a - steps_b)))
    if steps_b - steps_a:
        issues.append(StructureIssue("steps", f"{_steps_text(steps_b - steps_a)} recorded in B only",
                                     steps=sorted(steps_b - steps_a)))
    common = steps_a & steps_b
    only_a = [e for e in only_a if e.step in common]
    only_b = [e for e in only_b if e.step in common]

    only_a, only_b = _call_counts(a, b, only_a, only_b, issues)  # 1. the same module called a different number of times
    rest_a, rest_b = _renamed(only_a, only_b, issues)  # 2. same place, shape and module type, other name
    _missing(rest_a, rest_b, issues)  # 3. plainly missing on one side
    for issue in issues:
        if issue.steps and issue.type != "steps":
            issue.message += f" ({_steps_text(issue.steps)})"
            issue.steps = sorted(set(issue.steps))
        issue.keys_a = sorted(set(issue.keys_a))
        issue.keys_b = sorted(set(issue.keys_b))
    return pairs, issues


def _call_counts(a: dict[Any, Any], b: dict[Any, Any], only_a: list[Any], only_b: list[Any],
                 issues: list[StructureIssue]) -> tuple[list[Any], list[Any]]:
    """Entries explained by a module called a different number of times per step (one issue per module and
    pair of counts, appended to ``issues``); returns the unexplained rest of each side."""
    calls_a: dict[tuple[str, str], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    calls_b: dict[tuple[str, str], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for e in a.values():
        calls_a[(e.kind, base_name(e))][e.step] += 1
    for e in b.values():
        calls_b[(e.kind, base_name(e))][e.step] += 1
    explained: set[int] = set()
    grouped: dict[tuple[str, str, int, int], StructureIssue] = {}
    ids_a = {id(e) for e in only_a}
    for e in only_a + only_b:
        kb = (e.kind, base_name(e))
        na, nb = calls_a[kb].get(e.step, 0), calls_b[kb].get(e.step, 0)
        if na and nb and na != nb:
            gk = (kb[0], kb[1], na, nb)
            issue = grouped.get(gk)
            if issue is None:
                issue = grouped[gk] = StructureIssue(
                    "call_count", f"{kb[0]} {kb[1]}: called {na} time(s) per step in A, {nb} in B")
                issues.append(issue)
            (issue.keys_a if id(e) in ids_a else issue.keys_b).append(e.key)
            issue.steps.append(e.step)
            explained.add(id(e))
    only_a = [e for e in only_a if id(e) not in explained]
    only_b = [e for e in only_b if id(e) not in explained]
    return only_a, only_b


def _renamed(only_a: list[Any], only_b: list[Any], issues: list[StructureIssue]) -> tuple[list[Any], list[Any]]:
    """Pairs at the same position with the same shape and module type but another name (probably renamed; an
    issue each, appended to ``issues``); returns the rest of each side."""
    slot_b = {(e.step, e.kind, e.order, tuple(e.shape), e.module_type): e for e in only_b}
    renamed: dict[tuple[str, str], StructureIssue] = {}
    used_b: set[int] = set()
    rest_a = []
    for e in only_a:
        cand = slot_b.get((e.step, e.kind, e.order, tuple(e.shape), e.module_type))
        if cand is not None and id(cand) not in used_b and base_name(cand) != base_name(e):
            used_b.add(id(cand))
            rk = (e.key, cand.key)
            if rk not in renamed:
                renamed[rk] = StructureIssue("renamed", f"{e.key} in A and {cand.key} in B sit at the same "
                                             f"position with the same shape {list(e.shape)}: renamed module?",
                                             keys_a=[e.key], keys_b=[cand.key])
                issues.append(renamed[rk])
            renamed[rk].steps.append(e.step)
        else:
            rest_a.append(e)
    rest_b = [e for e in only_b if id(e) not in used_b]
    return rest_a, rest_b


def _missing(rest_a: list[Any], rest_b: list[Any], issues: list[StructureIssue]) -> None:
    """One issue per key recorded on one side only, appended to ``issues``."""
    for side, rest in (("a", rest_a), ("b", rest_b)):
        other = "B" if side == "a" else "A"
        by_key: dict[str, StructureIssue] = {}
        for e in rest:
            if e.key not in by_key:
                by_key[e.key] = StructureIssue(f"only_in_{side}", f"{e.key} recorded in {side.upper()} only "
                                               f"(missing in {other}: removed or renamed layer?)")
                (by_key[e.key].keys_a if side == "a" else by_key[e.key].keys_b).append(e.key)
                issues.append(by_key[e.key])
            by_key[e.key].steps.append(e.step)


def match_stages(stages_a: Sequence[dict[str, Any]], stages_b: Sequence[dict[str, Any]]) -> list[StructureIssue]:
    """Stages whose status differs between the runs, or that ran on one side only."""
    sa = {s.get("stage"): s for s in stages_a}
    sb = {s.get("stage"): s for s in stages_b}
    issues = []
    for name in list(sa) + [n for n in sb if n not in sa]:
        x, y = sa.get(name), sb.get(name)
        if x is None or y is None:
            side = "A" if y is None else "B"
            issues.append(StructureIssue("stage", f"stage {name} present in {side} only"))
        elif x.get("status") != y.get("status"):
            why = y.get("error") or x.get("error") or y.get("reason") or x.get("reason") or ""
            msg = f"stage {name}: {x.get('status')} in A, {y.get('status')} in B"
            issues.append(StructureIssue("stage", msg + (f" ({why.strip().splitlines()[0][:160]})" if why else "")))
    return issues

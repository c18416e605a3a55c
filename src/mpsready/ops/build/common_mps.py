"""Per-OpInfo dtype and macOS exceptions from ``torch/testing/_internal/common_mps.py`` (torch >= 2.8).

The file only defines anything under ``if torch.backends.mps.is_available():``, so importing it on Linux
gives a no-op (research note §3, pitfall 10); it is parsed here with ``ast`` and its ``mps_ops_modifier``
body is *evaluated symbolically* for one macOS version at a time: assignments of dict/set literals to the
xfail lists, ``if MACOS_VERSION < X:`` blocks, ``LIST.update({...})`` calls and inline
``[...] if MACOS_VERSION < 15.0 else [...]`` values.

Lists used (research note §3 table): ``UNIMPLEMENTED_XFAILLIST`` (support gaps: key -> None for all dtypes, or
a dtype list) and ``MACOS_BEFORE_<maj>_<min>_XFAILLIST`` (fails below that macOS). ``UNDEFINED_XFAILLIST``
(numerical mismatch), ``ON_MPS_XFAILLIST``, skips and the grad/error-input modifiers are not support data and
are ignored. Keys are OpInfo names (``op.name + op.variant_test_name``); :mod:`opinfo_map` maps them to aten
overloads.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from collections.abc import Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsready.ops.build import curated

COMMON_MPS = "torch/testing/_internal/common_mps.py"
# macOS versions at which the lists are evaluated (every threshold seen in the 2.8-2.14 files).
MACOS_POINTS = ("13.0", "13.3", "14.0", "14.4", "15.0", "26.0")
ALL_DTYPES = "*"
# torch.<attr> spellings -> canonical dtype names
DTYPE_ALIASES = {
    "float": "float32", "float32": "float32", "half": "float16", "float16": "float16", "bfloat16": "bfloat16",
    "double": "float64", "float64": "float64", "cfloat": "complex64", "complex64": "complex64",
    "cdouble": "complex128", "complex128": "complex128", "chalf": "complex32", "complex32": "complex32",
    "bool": "bool", "uint8": "uint8", "int8": "int8", "short": "int16", "int16": "int16", "int": "int32",
    "int32": "int32", "long": "int64", "int64": "int64", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64",
}
SUPPORT_LISTS = ("UNIMPLEMENTED_XFAILLIST",)


def _ver(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


class _Unknown(Exception):
    """An expression the symbolic evaluator does not understand (kept out of the data, reported)."""


@dataclass
class ParsedLists:
    """Result of evaluating ``mps_ops_modifier`` at one macOS version."""

    macos: str
    lists: dict[str, dict[str, Any]] = field(default_factory=dict)  # list name -> {key: None | [dtypes]}
    comments: dict[str, str] = field(default_factory=dict)  # key -> comment right above its entry
    skipped: list[str] = field(default_factory=list)  # entries whose value could not be evaluated


class _Evaluator:
    def __init__(self, macos: str, comments_by_line: dict[int, str]):
        self.macos = float(macos)  # MACOS_VERSION is a float in common_utils.py ("14.4" -> 14.4)
        self.out = ParsedLists(macos=macos)
        self.comments_by_line = comments_by_line

    # -- expressions --------------------------------------------------------------------------------------
    def test(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            if isinstance(left, ast.Name) and left.id == "MACOS_VERSION" and isinstance(right, ast.Constant):
                a, b = self.macos, float(right.value)  # type: ignore[arg-type]  # a number in common_mps.py
                op = type(node.ops[0])
                return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b, ast.Eq: a == b}.get(op, False)
        if isinstance(node, ast.BoolOp):
            vals = [self.test(v) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.test(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr  # torch.backends.mps.is_macos13_or_newer(minor?)
            if name.startswith("is_macos") and name.endswith("_or_newer"):
                major = int(name[len("is_macos"):-len("_or_newer")])
                minor = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else 0
                return self.macos >= float(f"{major}.{minor!s}")
        raise _Unknown(ast.dump(node)[:80])

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out = []
            for elt in node.elts:
                if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == "torch":
                    if elt.attr not in DTYPE_ALIASES:
                        raise _Unknown(elt.attr)
                    out.append(DTYPE_ALIASES[elt.attr])
                elif isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                    out.append(elt.value)
                else:
                    raise _Unknown(ast.dump(elt)[:80])
            return out
        if isinstance(node, ast.IfExp):
            return self.value(node.body if self.test(node.test) else node.orelse)
        raise _Unknown(ast.dump(node)[:80])

    def literal(self, node: ast.expr) -> dict[str, Any] | None:
        """A dict literal -> {key: value}; a set literal of strings -> {key: None}."""
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for k, v in zip(node.keys, node.values):
                if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                    continue
                try:
                    out[k.value] = self.value(v)
                except _Unknown as exc:
                    self.out.skipped.append(f"{k.value}: {exc}")
                    continue
                comment = self.comment_above(k.lineno)
                if comment:
                    self.out.comments.setdefault(k.value, comment)
            return out
        if isinstance(node, ast.Set):
            return {e.value: None for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        return None

    def comment_above(self, line: int) -> str | None:
        """The block of comment lines directly above ``line``, joined (None when the line above is code)."""
        block = []
        ln = line - 1
        while ln in self.comments_by_line:
            block.append(self.comments_by_line[ln])
            ln -= 1
        return " ".join(reversed(block)) or None

    # -- statements ---------------------------------------------------------------------------------------
    def run(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and stmt.value is not None:
                    lit = self.literal(stmt.value)
                    if lit is not None:
                        self.out.lists[targets[0].id] = lit
            elif isinstance(stmt, ast.If):
                try:
                    take = self.test(stmt.test)
                except _Unknown:
                    continue  # `if sparse:` and other run-time switches: not support data
                self.run(stmt.body if take else stmt.orelse)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                if (isinstance(call.func, ast.Attribute) and call.func.attr == "update"
                        and isinstance(call.func.value, ast.Name) and call.args):
                    lit = self.literal(call.args[0])
                    if lit is not None and call.func.value.id in self.out.lists:
                        self.out.lists[call.func.value.id].update(lit)


def _comments(source: str) -> dict[int, str]:
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string.lstrip("#").strip()
    return out


def _modifier(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name and len(node.body) > 3:
            return node
    return None


def evaluate(source: str, macos: str) -> ParsedLists:
    """Evaluate ``mps_ops_modifier``'s xfail lists for one macOS version. Raises ValueError if absent."""
    tree = ast.parse(source)
    fn = _modifier(tree, "mps_ops_modifier")
    if fn is None:
        raise ValueError("no mps_ops_modifier in common_mps.py")
    ev = _Evaluator(macos, _comments(source))
    ev.run(fn.body)
    return ev.out


def _before_lists(lists: dict[str, dict[str, Any]]) -> dict[str, str]:
    """``MACOS_BEFORE_14_4_XFAILLIST`` -> ``"14.4"`` for every such list present."""
    out = {}
    for name in lists:
        parts = name.split("_")
        if name.startswith("MACOS_BEFORE_") and name.endswith("_XFAILLIST") and len(parts) == 5:
            out[name] = f"{int(parts[2])}.{int(parts[3])}"
    return out


def failing_at(parsed: ParsedLists) -> dict[str, set[str]]:
    """key -> dtypes (or ``{"*"}``) that are unimplemented at ``parsed.macos``."""
    out: dict[str, set[str]] = {}
    lists = parsed.lists
    sources = [lists.get(n, {}) for n in SUPPORT_LISTS]
    for name, threshold in _before_lists(lists).items():
        if _ver(parsed.macos) < _ver(threshold):
            sources.append(lists[name])
    for lst in sources:
        for key, dtypes in lst.items():
            if dtypes is None:
                out.setdefault(key, set()).add(ALL_DTYPES)
            elif dtypes:
                out.setdefault(key, set()).update(dtypes)
    return out


@dataclass
class KeyExceptions:
    """Per OpInfo key: ``dx`` dtype -> {"unsupported": True} or {"min_macos": "15.0"}; ``comment``."""

    dx: dict[str, dict[str, Any]]
    comment: str | None


def key_exceptions(source: str, min_macos: str) -> tuple[dict[str, KeyExceptions], list[str], int]:
    """Evaluate at every ``MACOS_POINTS`` >= ``min_macos``; a dtype failing at all of them is ``unsupported``,
    one failing only below a version V gets ``min_macos: V``. Returns (per key, skipped entries, complex
    allow-list size)."""
    points = [m for m in MACOS_POINTS if _ver(m) >= _ver(min_macos)]
    runs = [evaluate(source, m) for m in points]
    fails = [failing_at(r) for r in runs]
    keys = sorted(set().union(*fails))
    comments: dict[str, str] = {}
    skipped: list[str] = []
    for r in runs:
        for k, c in r.comments.items():
            comments.setdefault(k, c)
        skipped.extend(s for s in r.skipped if s not in skipped)
    out: dict[str, KeyExceptions] = {}
    for key in keys:
        dx: dict[str, dict[str, Any]] = {}
        dtypes = set().union(*(f.get(key, set()) for f in fails))
        for dtype in sorted(dtypes):
            failing = [key in f and dtype in f[key] for f in fails]
            if all(failing):
                dx[dtype] = {"unsupported": True}
            elif failing[0] and not any(failing[failing.index(False):]):
                dx[dtype] = {"min_macos": points[failing.index(False)]}
            else:  # fails only on some newer macOS (a regression): keep the versions where it fails
                dx[dtype] = {"fails_on_macos": [p for p, bad in zip(points, failing) if bad]}
        out[key] = KeyExceptions(dx=dx, comment=comments.get(key))
    complex_ops = runs[-1].lists.get("SUPPORTED_COMPLEX_OPS", {}) if runs else {}
    return out, skipped, len(complex_ops)


@dataclass
class ReleaseExtras:
    """What the builder merges into one release's table from common_mps.py."""

    ops: dict[str, dict[str, Any]]  # overload -> {"dx": ..., "cond": [...]}
    unmapped: list[str]  # OpInfo keys with exceptions that map to no aten overload
    skipped: list[str]
    complex_allowlist: int
    keys: int
    list_sizes: dict[str, Any] = field(default_factory=dict)  # research note §3 table, for the tests


def complex_allowlist(source: str) -> set[str]:
    """OpInfo keys whose complex tests are expected to pass on MPS (macOS >= 14): ``SUPPORTED_COMPLEX_OPS``,
    plus ``AFTER_MACOS_14_0_SUPPORTED_COMPLEX_OPS`` where present (2.8). Every other OpInfo gets an xfail for
    complex32/complex64 in ``mps_ops_modifier`` (research note §3)."""
    lists = evaluate(source, "14.0").lists
    return set(lists.get("SUPPORTED_COMPLEX_OPS", {})) | set(lists.get("AFTER_MACOS_14_0_SUPPORTED_COMPLEX_OPS", {}))


def skipped_keys(source: str) -> set[str]:
    """OpInfo keys whose MPS tests are skipped (``EMPTY_OPS_SKIPLIST``, ``SKIPLIST``): an xfail says nothing."""
    lists = evaluate(source, "14.0").lists
    return set(lists.get("EMPTY_OPS_SKIPLIST", {})) | set(lists.get("SKIPLIST", {}))


def complex_gaps(allowed: set[str], candidates: dict[str, list[str]], skipped: Set[str] = frozenset(),
                 never: Set[str] = frozenset()) -> dict[str, str]:
    """Overload -> the OpInfo key that shows complex64 failing on MPS.

    An overload is flagged only when every complex64-capable OpInfo that dispatches it (matched by name) is
    outside the allow-list; one allow-listed OpInfo reaching it clears it. Skipped keys and ``never``
    overloads (allocation/view plumbing such as ``empty_like`` or ``resize_``) are not flagged.
    """
    cleared = {o for key, ops in candidates.items() if key in allowed for o in ops} | set(never)
    out: dict[str, str] = {}
    for key in sorted(candidates):
        if key in allowed or key in skipped:
            continue
        for o in candidates[key]:
            if o not in cleared:
                out.setdefault(o, key)
    return out


def load_opinfo_map() -> tuple[dict[str, list[str]], set[str]]:
    """OpInfo key -> aten overloads (the generated ``opinfo_map.json`` with curated overrides on top), and the
    set of "direct" keys whose xfailed dtypes are the ops' own gaps (see ``opinfo_overrides.yaml``)."""
    from importlib import resources

    gen = json.loads(resources.files(curated.CURATED).joinpath("opinfo_map.json").read_text(encoding="utf-8"))
    mapping = {k: list(v) for k, v in gen["map"].items()}
    direct = set(gen.get("direct", ()))
    for entry in curated.load("opinfo_overrides")["entries"]:
        mapping[entry["key"]] = list(entry["ops"])
        if entry.get("as") == "condition":
            direct.discard(entry["key"])
        else:
            direct.add(entry["key"])
    return mapping, direct


def describe(exc: "KeyExceptions") -> str:
    """``"float32, int64 (below macOS 15.0)"``-style summary of one key's failing dtypes."""
    parts = []
    for dtype, info in exc.dx.items():
        name = "every dtype" if dtype == ALL_DTYPES else dtype
        if info.get("min_macos"):
            name += f" (below macOS {info['min_macos']})"
        elif info.get("fails_on_macos"):
            name += f" (on macOS {', '.join(info['fails_on_macos'])})"
        parts.append(name)
    return ", ".join(parts)


def ops_for_release(files: Path, release: str) -> ReleaseExtras | None:
    """Per-overload exceptions for one release (None when the wheel has no common_mps.py, i.e. < 2.8)."""
    path = files / COMMON_MPS
    if not path.exists():
        return None
    rules = curated.load("global_rules")
    min_macos = next(e["min_macos"] for e in curated.for_release(rules["min_macos"], release))
    per_key, skipped, n_complex = key_exceptions(path.read_text(encoding="utf-8"), min_macos)
    mapping, direct = load_opinfo_map()
    conditions = {e["key"]: e for e in curated.load("opinfo_overrides").get("conditions", [])}
    ops: dict[str, dict[str, Any]] = {}
    unmapped = []
    for key, exc in per_key.items():
        if key in ("double", "cdouble"):  # the global float64/complex128 rule, stated as OpInfo keys
            continue
        targets = mapping.get(key)
        if not targets:
            unmapped.append(key)
            continue
        for op in targets:
            rec = ops.setdefault(op, {})
            if key in conditions:  # an input condition, not a dtype gap (research note §3 caveat)
                cond = conditions[key]["condition"]
                if cond not in rec.setdefault("cond", []):
                    rec["cond"].append(cond)
                continue
            if key not in direct:  # a variant/composite OpInfo reaching this op: some calls fail, not all
                cond = (f"some calls fail on MPS for {describe(exc)}: common_mps.py xfails OpInfo '{key}'"
                        + (f" ({exc.comment})" if exc.comment else ""))
                if cond not in rec.setdefault("cond", []):
                    rec["cond"].append(cond)
                continue
            dx = rec.setdefault("dx", {})
            for dtype, info in exc.dx.items():
                entry = dict(info)
                entry["opinfo"] = key
                if exc.comment:
                    entry["message"] = exc.comment
                prev = dx.get(dtype)
                # keep the stricter of two OpInfos mapping to one overload (unsupported beats min_macos)
                if prev is None or (entry.get("unsupported") and not prev.get("unsupported")):
                    dx[dtype] = entry
            star = dx.get(ALL_DTYPES, {})
            if star.get("min_macos"):  # every dtype needs a newer macOS: the op's own minimum
                rec["mm"] = star["min_macos"]
    source = path.read_text(encoding="utf-8")
    from importlib import resources

    gen = json.loads(resources.files(curated.CURATED).joinpath("opinfo_map.json").read_text(encoding="utf-8"))
    from mpsready.ops.build.opinfo_map import PLUMBING

    gaps = complex_gaps(complex_allowlist(source), gen.get("complex_candidates", {}), skipped_keys(source), PLUMBING)
    for op, key in gaps.items():
        dx = ops.setdefault(op, {}).setdefault("dx", {})
        dx.setdefault("complex64", {"unsupported": True, "opinfo": key,
                                    "message": "OpInfo not in SUPPORTED_COMPLEX_OPS of common_mps.py: its complex32/"
                                           "complex64 tests are expected failures on MPS"})
    sizes: dict[str, Any] = {}
    for macos in ("14.0", "15.0"):
        lists = evaluate(source, macos).lists
        unimpl = lists.get("UNIMPLEMENTED_XFAILLIST", {})
        sizes[macos] = {"unimplemented": len(unimpl), "unimplemented_all_dtypes": sum(v is None for v in unimpl.values()),
                        "undefined": len(lists.get("UNDEFINED_XFAILLIST", {}))}
    return ReleaseExtras(ops=ops, unmapped=sorted(unmapped), skipped=skipped, complex_allowlist=n_complex,
                         keys=len(per_key), list_sizes=sizes)

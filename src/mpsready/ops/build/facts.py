"""Mine MPS refusal facts from PyTorch's own sources, per release, and measure what the data covers (issue 33).

Maintainers only, never at run time; offline, from files the maintainer provides::

    PYTHONPATH=src python -m mpsready.ops.build.facts --sources DIR [-o facts.json]   # mine, print coverage
    PYTHONPATH=src python -m mpsready.ops.build.facts                                 # coverage of shipped data

``DIR`` holds one folder per release, named by its version (``DIR/2.5.1/``), with the files of that release's
source tree under their repository paths (``git archive v2.5.1 aten/src/ATen/native/mps
aten/src/ATen/native/native_functions.yaml torch/testing/_internal/common_mps.py``, or the four members
``mpsready.ops.build.fetch`` keeps). From them:

* every ``TORCH_CHECK``/``TORCH_CHECK_TYPE``/``TORCH_CHECK_NOT_IMPLEMENTED`` in the MPS operator sources
  (``aten/src/ATen/native/mps/**/*.mm``, ``*.h``, ``*.cpp``): its condition, its message (string literals kept,
  other parts shown as ``{expr}``), the function it sits in, and a class read from the condition (``dtype``,
  ``rank``, ``size``, ``macos``, ``other``); the function is tied to the aten overloads whose yaml ``dispatch``
  names it for ``MPS`` (and their ``structured_delegate`` variants). The C++ is scanned with a small tokenizer
  (strings, comments and nested parentheses), not a C++ parser: a fact records the file and line to read;
* ``common_mps.py``'s expected-failure lists, evaluated per macOS (:mod:`mpsready.ops.build.common_mps`): the
  OpInfo keys with dtypes that fail, mapped to aten overloads (``data/curated/opinfo_map.json``).

Each fact carries ``release``, ``source`` (``path:line @ release``) and ``range``: ``read`` (read in that release's
file); facts are never extended to other releases here. The output JSON (schema ``mpsready.ops-facts`` v1) is
``{"releases": {version: {"facts": [...], "coverage": {...}}}}``; the coverage printed per release is: aten
overloads with an MPS kernel, those with at least one mined fact, those with a ``common_mps.py`` dtype fact, and
the dtypes any fact names. Without ``--sources`` it prints the coverage of the shipped tables and curated files
(the figures in docs/emulation.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

SCHEMA = {"name": "mpsready.ops-facts", "version": 1}
MPS_DIR = "aten/src/ATen/native/mps"
YAML = "aten/src/ATen/native/native_functions.yaml"
COMMON_MPS = "torch/testing/_internal/common_mps.py"
CHECKS = ("TORCH_CHECK_NOT_IMPLEMENTED", "TORCH_CHECK_TYPE", "TORCH_CHECK")
# the messages of the release's macOS libtorch_cpu.dylib that name MPS, macOS or Metal (mpsready.ops.build.harvest)
BINARY_STRINGS = "libtorch_cpu.mps_strings.txt"
WHEEL_MANIFEST = "wheel.json"
# what makes a binary string a refusal (read in the message text, not in any source code)
_REFUSAL = re.compile(r"not supported|only supported|only supports?\b|does not support|doesn't support|do not support|"
                      r"not implemented|[Uu]nsupported|requires? mac[Oo][Ss]|supports tensors with|"
                      r"not currently supported|supported natively|is supported on [Mm]ac|only available|"
                      r"doesn't allow|larger than|must be divisible|needs [Mm]ac[Oo][Ss]|not natively supported|"
                      r"is not supported|are not supported|Cannot convert|not allowed|too large|exceeds|doesn't know how")
_PLACEMENT = re.compile(r"expected '?\w+'? to be (?:an )?MPS|must be (?:a )?MPS tensor|Placeholder storage|"
                        r"Passed CPU tensor to MPS op|Tensor is not on the MPS device|to be on MPS|"
                        r"expected tensors to be on MPS|not a MPS tensor|both inputs must be on MPS")
_MACOS = re.compile(r"[Mm]ac[Oo][Ss][ _]?X?\s?(\d{2})(?:[._](\d))?")
_MSG_DTYPES = (("int64", r"\bint64|\bi64\b|\blong\b|torch\.long|\bLong\b"), ("float64", r"float64|\bdouble|\bDouble"),
               ("bfloat16", r"bfloat16|BFloat16|\bBF16"), ("float16", r"float16|\bhalf\b|\bFP16|\bHalf\b"),
               ("complex64", r"\bcomplex|\bComplex|cfloat|complex64"), ("int32", r"int32"), ("uint8", r"uint8"),
               ("bool", r"\bbool\b"), ("float32", r"float32"))
_MSG_RANK = re.compile(r"dimensions|\bdims?\b|\brank\b|\bindices\b|-D\b|\b\dD\b")
_MSG_SIZE = re.compile(r"2\*\*3[12]|INT_MAX|larger than|64-bit indexing|too large|> ?\d{4,}|exceeds|elements")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
# op base names that are also common words of messages: never read as the op a message is about
_NOT_AN_OP = frozenset({"to", "is", "and", "or", "not", "all", "any", "where", "t", "input", "output", "size", "type",
                        "data", "view", "set", "copy", "empty", "index", "one", "the", "fill", "zero", "sort",
                        "max", "min", "mode", "bool", "float", "long", "int", "double", "half", "real", "imag",
                        "conj", "rank", "sign", "abs", "round", "clone", "item", "stride", "resize", "select",
                        "split", "chunk", "take", "put", "narrow", "expand", "square", "exp", "log", "dim", "std",
                        "var", "mean", "sum", "prod", "ones", "zeros", "full", "range", "arange", "detach",
                        "contiguous", "device", "alias", "lift", "slice", "unfold", "matrix_exp", "grad",
                        "conv", "pad", "trace", "numel", "stack", "cat", "outer", "inner", "complex", "norm",
                        "batch", "mps", "MPS", "dtype"})
# names messages use for ops whose aten name differs (the miner's reading; each maps to aten base names)
_MESSAGE_NAMES = {"batch norm": ("native_batch_norm", "_native_batch_norm_legit"), "max pooling": ("max_pool2d",
                  "max_pool2d_with_indices"), "adaptive max pooling": ("adaptive_max_pool2d",),
                  "upsample": ("upsample_nearest2d", "upsample_bilinear2d", "upsample_nearest1d",
                               "upsample_linear1d", "upsample_bicubic2d"),
                  "log_softmax": ("_log_softmax",), "softmax with half": ("_softmax",), "mish": ("mish",),
                  "conv3d": ("_mps_convolution",), "convtranspose 3d": ("_mps_convolution_transpose",),
                  "fft": ("_fft_r2c", "_fft_c2r", "_fft_c2c"), "linalg.svd": ("_linalg_svd",),
                  "linalg.eigh": ("_linalg_eigh",), "nlld_loss": ("nll_loss2d_forward", "nll_loss_forward"),
                  "scaled_dot_product_attention": ("_scaled_dot_product_attention_math_for_mps",),
                  "unique ": ("_unique2", "unique_dim", "unique_consecutive"), "trunc_divide": ("div",),
                  "lgamma_out": ("lgamma",), "digamma_out": ("digamma",), "polygamma_out": ("polygamma",),
                  "mps norm": ("norm", "linalg_vector_norm"), "adaptive pool": ("_adaptive_avg_pool2d",
                                                                                  "adaptive_max_pool2d"),
                  "constant padding": ("constant_pad_nd",), "lstm": ("_lstm_mps",), "cross": ("linalg_cross",),
                  "grid_sampler_3d backward": ("grid_sampler_3d_backward",)}
# words of a condition that say what it checks (the first class that matches wins)
_CLASSES = (("macos", ("is_macos", "MacOSVersion", "macOS", "is_macOS")),
            ("dtype", ("scalar_type", "ScalarType", "isIntegralType", "isComplexType", "isFloatingType", "dtype",
                       "kLong", "kInt", "kDouble", "kBool", "kHalf", "kBFloat16", "kComplex")),
            ("rank", ("dim()", "ndim", ".dim(", "dims")),
            ("size", ("numel", "size(", "sizes", "INT_MAX", "max()", "nbytes")))
_DTYPE_WORDS = {"kLong": "int64", "kInt": "int32", "kShort": "int16", "kChar": "int8", "kByte": "uint8",
                "kBool": "bool", "kHalf": "float16", "kFloat": "float32", "kDouble": "float64",
                "kBFloat16": "bfloat16", "kComplexFloat": "complex64", "kComplexDouble": "complex128",
                "ScalarType::Long": "int64", "ScalarType::Int": "int32", "ScalarType::Double": "float64",
                "ScalarType::Bool": "bool", "ScalarType::Half": "float16", "ScalarType::BFloat16": "bfloat16",
                "ScalarType::ComplexFloat": "complex64", "ScalarType::ComplexDouble": "complex128",
                "ScalarType::Byte": "uint8", "ScalarType::Char": "int8", "ScalarType::Short": "int16"}


@dataclass
class Fact:
    """One refusal read in one release's source."""

    release: str
    ops: list[str]
    function: str | None
    kind: str  # dtype | rank | size | macos | other | common_mps
    condition: str
    message: str
    dtypes: list[str]
    source: str
    range: str = "read"
    macos_min: str | None = None  # a macOS version the message states ("requires macOS 15.0 or newer")


# ------------------------------------------------------------------ a small C++ tokenizer
def _skip_string(text: str, i: int) -> int:
    """Index after the string or char literal starting at ``text[i]``."""
    quote = text[i]
    i += 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _blank_comments(text: str) -> str:
    """``text`` with comments replaced by spaces (newlines kept, so lines stay where they are)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = _skip_string(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _call_args(text: str, i: int) -> tuple[list[str], int]:
    """The top-level comma-separated arguments of the call whose ``(`` is at ``text[i]``, and the index after it."""
    depth, args, start, j = 0, [], i + 1, i
    while j < len(text):
        c = text[j]
        if c in "\"'":
            j = _skip_string(text, j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:j].strip())
                return args, j + 1
        elif c == "," and depth == 1:
            args.append(text[start:j].strip())
            start = j + 1
        j += 1
    return args, j


def _message(parts: list[str]) -> str:
    """String literals as they are (adjacent literals joined), anything else as ``{expr}``."""
    out = []
    for p in parts:
        p = p.strip()
        if len(p) >= 2 and p[0] == p[-1] == '"':
            pieces, k = [], 0
            while k < len(p):
                if p[k] == '"':
                    end = _skip_string(p, k)
                    pieces.append(p[k + 1:end - 1].encode().decode("unicode_escape", "replace"))
                    k = end
                else:
                    k += 1
            out.append("".join(pieces))
        elif p:
            out.append("{" + " ".join(p.split()) + "}")
    return "".join(out)


def _functions(text: str) -> list[tuple[int, str]]:
    """``(offset, name)`` of each brace-depth-0 function body opening: the identifier before the ``(`` of its
    signature."""
    out, depth, i = [], 0, 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = _skip_string(text, i)
            continue
        if c == "{":
            if depth == 0:
                head = text[max(0, i - 400):i]
                paren = head.rfind("(")
                if paren > 0 and head.rstrip().endswith((")", "const", "override")):
                    name = head[:paren].rstrip().split()[-1] if head[:paren].split() else ""
                    if name.endswith(")") and "(" in name:  # TORCH_IMPL_FUNC(cumsum_out_mps)\n(args) {
                        name = name[name.index("(") + 1:-1]
                    name = name.split("::")[-1].lstrip("*&")
                    if name.isidentifier():
                        out.append((i, name))
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        i += 1
    return out


def checks_in(text: str) -> Iterator[tuple[int, str, str, list[str]]]:
    """``(line, function, condition, message parts)`` of every TORCH_CHECK* call in C++ ``text``."""
    clean = _blank_comments(text)
    funcs = _functions(_strip_namespaces(clean))
    i = 0
    while True:
        hit, name = min(((clean.find(n + "(", i), n) for n in CHECKS), key=lambda p: (p[0] < 0, p[0]))
        if hit < 0:
            return
        if hit > 0 and (clean[hit - 1].isalnum() or clean[hit - 1] == "_"):
            i = hit + len(name)
            continue
        args, end = _call_args(clean, hit + len(name))
        line = clean.count("\n", 0, hit) + 1
        fn = next((f for off, f in reversed(funcs) if off < hit), None)
        cond = args[0] if name != "TORCH_CHECK_NOT_IMPLEMENTED" or args else ""
        yield line, fn or "", " ".join(cond.split()), args[1:]
        i = end


def _strip_namespaces(text: str) -> str:
    """``namespace x {`` openings blanked (their braces too), so that functions inside read as depth 0."""
    out = list(text)
    i = 0
    while True:
        j = text.find("namespace", i)
        if j < 0:
            break
        k = text.find("{", j)
        semi = text.find(";", j)
        if k >= 0 and (semi < 0 or k < semi) and text[j + 9:k].strip().replace("::", "").replace("_", "").isalnum():
            out[k] = " "
            depth, m = 1, k + 1
            while m < len(text) and depth:
                if text[m] in "\"'":
                    m = _skip_string(text, m)
                    continue
                if text[m] == "{":
                    depth += 1
                elif text[m] == "}":
                    depth -= 1
                    if depth == 0:
                        out[m] = " "
                m += 1
        i = j + 9
    return "".join(out)


def classify(condition: str) -> tuple[str, list[str]]:
    """(kind, dtypes named) of a check's condition."""
    kind = next((k for k, words in _CLASSES if any(w in condition for w in words)), "other")
    dtypes = sorted({d for w, d in _DTYPE_WORDS.items() if w in condition})
    return kind, dtypes


# ------------------------------------------------------------------ the yaml: kernel function -> aten overloads
def kernel_ops(yaml_text: str) -> tuple[dict[str, list[str]], set[str]]:
    """``({MPS kernel function: [overloads]}, {overloads with an MPS kernel})`` from native_functions.yaml
    (structured delegates inherit their ``.out`` op's kernel)."""
    entries = yaml.safe_load(yaml_text) or []
    by_fn: dict[str, list[str]] = defaultdict(list)
    kernel_of: dict[str, str] = {}
    delegates: dict[str, str] = {}
    for e in entries:
        name = str(e["func"]).split("(", 1)[0].strip()
        for keys, fn in (e.get("dispatch") or {}).items():
            if "MPS" in [k.strip() for k in str(keys).split(",")]:
                by_fn[str(fn)].append(name)
                kernel_of[name] = str(fn)
        if e.get("structured_delegate"):
            delegates[name] = str(e["structured_delegate"])
    for name, out in delegates.items():
        if out in kernel_of:
            by_fn[kernel_of[out]].append(name)
            kernel_of[name] = kernel_of[out]
    return dict(by_fn), set(kernel_of)


def _stem(fn: str) -> str:
    for suffix in ("_out_mps", "_mps_out", "_mps", "_out"):
        if fn.endswith(suffix):
            return fn[: -len(suffix)]
    return fn


# ------------------------------------------------------------------ one release
def mine_release(root: Path, release: str) -> dict[str, Any]:
    """Facts and coverage of one release folder (module docstring)."""
    yaml_path = root / YAML
    if not yaml_path.is_file():
        alt = next(iter(root.rglob("native_functions.yaml")), None)
        if alt is None:
            raise ValueError(f"{root}: no native_functions.yaml")
        yaml_path = alt
    by_fn, with_kernel = kernel_ops(yaml_path.read_text(encoding="utf-8"))
    by_stem: dict[str, list[str]] = defaultdict(list)
    for fn, ops in by_fn.items():
        by_stem[_stem(fn)].extend(ops)
    facts: list[Fact] = []
    mps_dir = root / MPS_DIR
    for path in sorted(p for p in mps_dir.rglob("*") if p.suffix in (".mm", ".h", ".cpp")) if mps_dir.is_dir() else ():
        rel_path = path.relative_to(root).as_posix()
        for line, fn, cond, parts in checks_in(path.read_text(encoding="utf-8", errors="replace")):
            kind, dtypes = classify(cond)
            ops = sorted(set(by_fn.get(fn) or by_stem.get(_stem(fn)) or []))
            facts.append(Fact(release, ops, fn or None, kind, cond, _message(parts), dtypes,
                              f"{rel_path}:{line} @ {release}"))
    facts += _common_mps_facts(root, release)
    facts += _binary_facts(root, release, _base_names(with_kernel, by_fn))
    ops_with = {op for f in facts for op in f.ops}
    dtype_ops = {op for f in facts if f.kind.startswith("common_mps") for op in f.ops}
    binary = [f for f in facts if f.condition == "message present in the release's binary"]
    checks = [f for f in facts if not f.kind.startswith("common_mps") and f not in binary]
    coverage = {"mps_kernel_overloads": len(with_kernel),
                "overloads_with_a_fact": len(ops_with & with_kernel),
                "overloads_with_a_common_mps_dtype_fact": len(dtype_ops & with_kernel),
                "overloads_with_a_binary_message": len({op for f in binary for op in f.ops} & with_kernel),
                "binary_messages": len(binary),
                "binary_messages_tied_to_an_op": sum(1 for f in binary if f.ops),
                "checks_read": len(checks),
                "checks_tied_to_an_op": sum(1 for f in checks if f.ops),
                "dtypes_named": sorted({d for f in facts for d in f.dtypes} - {"*"})}
    manifest = root / WHEEL_MANIFEST
    info = json.loads(manifest.read_text()) if manifest.is_file() else {}
    wheel = {k: info[k] for k in ("wheel", "sha256", "git_version") if k in info} or None
    return {"facts": [asdict(f) for f in facts], "coverage": coverage, "wheel": wheel,
            "_ops": sorted(ops_with & with_kernel)}


def _common_mps_facts(root: Path, release: str) -> list[Fact]:
    path = root / COMMON_MPS
    if not path.is_file():
        return []
    from mpsready.ops.build import common_mps

    source = path.read_text(encoding="utf-8")
    mapping, _direct = common_mps.load_opinfo_map()
    out = []
    # the complex allow-list (complex64 expected to work, macOS 14+) and the lists of expected mismatches with
    # the CPU (UNDEFINED_XFAILLIST: numerics, not support): per OpInfo key, mapped like the expected failures
    from importlib import resources

    from mpsready.ops.build import curated

    candidates = json.loads(resources.files(curated.CURATED).joinpath("opinfo_map.json").read_text(
        encoding="utf-8")).get("complex_candidates", {})
    for key in sorted(common_mps.complex_allowlist(source)):
        ops = sorted(set(mapping.get(key, [])) | set(candidates.get(key, [])))
        out.append(Fact(release, ops, None, "common_mps_complex", f"OpInfo {key!r} in SUPPORTED_COMPLEX_OPS "
                        "(complex64 expected to work on macOS 14+)", "", ["complex64"], f"{COMMON_MPS} @ {release}"))
    for key, dtypes in sorted(common_mps.evaluate(source, "15.0").lists.get("UNDEFINED_XFAILLIST", {}).items()):
        out.append(Fact(release, sorted(mapping.get(key, [])), None, "common_mps_mismatch",
                        f"OpInfo {key!r} in UNDEFINED_XFAILLIST (expected to differ from the CPU on macOS 15)", "",
                        sorted(dtypes or ["*"]), f"{COMMON_MPS} @ {release}"))
    for macos in common_mps.MACOS_POINTS if hasattr(common_mps, "MACOS_POINTS") else ("14.0", "15.0"):
        failing = common_mps.failing_at(common_mps.evaluate(source, macos))
        for key, dtypes in sorted(failing.items()):
            out.append(Fact(release, sorted(mapping.get(key, [])), None, "common_mps",
                            f"OpInfo {key!r} expected to fail on macOS {macos}", "", sorted(dtypes),
                            f"{COMMON_MPS} @ {release}"))
    return out


def _base_names(with_kernel: set[str], by_fn: dict[str, list[str]]) -> dict[str, list[str]]:
    """``{op base name (before the overload): [overloads with an MPS kernel]}`` (``linalg_svd`` also as
    ``linalg.svd``, the Python spelling messages use)."""
    out: dict[str, list[str]] = defaultdict(list)
    for op in sorted(with_kernel):
        base = op.split(".", 1)[0].rstrip("_")
        out[base].append(op)
        if base.startswith(("linalg_", "special_", "fft_")):
            out[base.replace("_", ".", 1)].append(op)
    return out


def message_facts(text: str) -> tuple[str, list[str], str | None]:
    """``(kind, dtypes, macOS version)`` a binary message states (read in its words)."""
    mac = _MACOS.search(text)
    macos = f"{mac.group(1)}.{mac.group(2) or 0}" if mac else None
    refused = text.split("Please use", 1)[0]  # "... doesn't support float64. Please use float32 instead."
    dtypes = [d for d, pat in _MSG_DTYPES if re.search(pat, refused)]
    if _PLACEMENT.search(text):
        kind = "placement"
    elif macos:
        kind = "macos"
    elif dtypes:
        kind = "dtype"
    elif _MSG_RANK.search(text):
        kind = "rank"
    elif _MSG_SIZE.search(text):
        kind = "size"
    else:
        kind = "other"
    return kind, dtypes, macos


def _binary_facts(root: Path, release: str, bases: dict[str, list[str]]) -> list[Fact]:
    """One fact per refusal message of the release's macOS ``libtorch_cpu.dylib`` (``BINARY_STRINGS``), tied to
    the ops whose names the message says (``ops`` empty where it names none: a rule of the whole backend)."""
    path = root / BINARY_STRINGS
    if not path.is_file():
        return []
    manifest = root / WHEEL_MANIFEST
    wheel = json.loads(manifest.read_text()).get("wheel", "") if manifest.is_file() else ""
    where = f"torch/lib/libtorch_cpu.dylib of {wheel}" if wheel else "torch/lib/libtorch_cpu.dylib"
    out = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = raw.strip()
        if "INTERNAL ASSERT" in text or not (_REFUSAL.search(text) or _PLACEMENT.search(text)):
            continue
        kind, dtypes, macos = message_facts(text)
        named = {t.rstrip("_:") for t in _IDENT.findall(text) if t not in _NOT_AN_OP}
        low = text.lower()
        named |= {b for phrase, names in _MESSAGE_NAMES.items() if phrase in low for b in names}
        ops = sorted({op for t in named for op in bases.get(t, ())})
        out.append(Fact(release, ops, None, kind, "message present in the release's binary", text, dtypes,
                        f"{where} (string {n} of {BINARY_STRINGS}) @ {release}", macos_min=macos))
    return out


def merged(releases: dict[str, Any]) -> dict[str, Any]:
    """The mined facts across releases, each once with the releases it was read in: ``messages`` (from the
    binaries), ``common_mps`` (per OpInfo key and macOS), ``checks`` (TORCH_CHECKs of the sources given), and
    ``wheels`` (per release: the wheel, its sha256 and source commit). What the repository ships
    (``data/mined/mps_facts.json``)."""
    from packaging.version import Version

    order = sorted(releases, key=Version)
    buckets: dict[str, dict[tuple, dict[str, Any]]] = {"messages": {}, "common_mps": {}, "checks": {}}
    for rel in order:
        for f in releases[rel]["facts"]:
            group = ("messages" if f["condition"] == "message present in the release's binary"
                     else "common_mps" if f["kind"].startswith("common_mps") else "checks")
            key = (f["message"], f["condition"], tuple(f["ops"]), tuple(f["dtypes"]), f["kind"])
            entry = buckets[group].setdefault(key, {
                "kind": f["kind"], "message": f["message"], "condition": f["condition"], "ops": f["ops"],
                "dtypes": f["dtypes"], "macos_min": f.get("macos_min"), "releases": [],
                "source": f["source"].rsplit(" @ ", 1)[0].split(" (string ")[0], "range": f["range"]})
            if rel not in entry["releases"]:
                entry["releases"].append(rel)
    out: dict[str, Any] = {"schema": {"name": "mpsready.ops-mined", "version": 1}, "releases": order,
                           "how": "each fact was read in the file of every release listed in its 'releases' "
                                  "(range 'read'); nothing is carried from one release to another",
                           "wheels": {rel: releases[rel].get("wheel") for rel in order}}
    for group, items in buckets.items():
        out[group] = list(items.values())
    out["coverage"] = {rel: releases[rel]["coverage"] for rel in order}
    return out


# ------------------------------------------------------------------ coverage of the shipped data
def shipped_coverage(with_ops: bool = False) -> dict[str, dict[str, Any]]:
    """Per shipped release: overloads with an MPS kernel, those with a per-op dtype fact (common_mps.py
    exceptions or conditions in the table, or a check of mps_dtype_checks.yaml / mps_shape_rules.yaml), and the
    dtypes the dtype support table states (mps_dtype_support.yaml); ``with_ops``: also ``ops``, the set of those
    overloads (for the union with mined facts)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from mpsready.ops import api
    from mpsready.ops.build import curated

    checks = curated.load("mps_dtype_checks")
    shape = curated.load("mps_shape_rules")["rules"]
    support = curated.load("mps_dtype_support")["rules"]
    out = {}
    for rel in api.shipped_versions():
        db = api.load_db(rel)
        v = Version(rel)
        curated_ops = {"aten::" + op for kind in ("dtype_checks", "call_checks") for e in checks.get(kind) or ()
                       if v in SpecifierSet(e.get("torch") or "") for op in e["ops"] if op != "*"}
        curated_ops |= {"aten::" + r["op"] for r in shape if v in SpecifierSet(r.get("torch") or "")}
        kernels, common, with_fact = 0, 0, set()
        for key in db.op_names():
            rec = db.raw(key) or {}
            if rec.get("s") != "kernel":
                continue
            kernels += 1
            has_common = bool(rec.get("dx") or rec.get("cond"))
            common += has_common
            if has_common or ("aten::" + key) in curated_ops:
                with_fact.add(key)
        dtypes = sorted({r["dtype"] for r in support if v in SpecifierSet(r.get("torch") or "")})
        row: dict[str, Any] = {"mps_kernel_overloads": kernels, "overloads_with_a_dtype_fact": len(with_fact),
                               "overloads_with_a_common_mps_fact": common, "dtypes_in_support_table": len(dtypes)}
        out[rel] = row
        if with_ops:
            out[rel]["ops"] = with_fact
            out[rel]["dtypes"] = dtypes
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.facts", description=__doc__.splitlines()[0])
    ap.add_argument("--sources", metavar="DIR", help="one folder per release (DIR/2.5.1/...), see the docstring")
    ap.add_argument("-o", "--output", metavar="FILE", help="write the mined facts as JSON, per release")
    ap.add_argument("--merged", metavar="FILE",
                    help="write the facts across releases, each once with its releases (data/mined/mps_facts.json)")
    args = ap.parse_args(argv)
    if not args.sources:
        cov = shipped_coverage()
        print("release  MPS-kernel overloads  with a dtype fact  from common_mps.py  dtypes in the support table")
        for rel, c in cov.items():
            print(f"{rel:8} {c['mps_kernel_overloads']:21} {c['overloads_with_a_dtype_fact']:18} "
                  f"{c['overloads_with_a_common_mps_fact']:19} {c['dtypes_in_support_table']:28}")
        return 0
    from mpsready.ops.build.harvest import release_dirs

    root = Path(args.sources)
    releases: dict[str, Any] = {}
    try:
        for sub in release_dirs(root):
            releases[sub.name] = mine_release(sub, sub.name)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        print(f"facts: {exc}", file=sys.stderr)
        return 2
    if not releases:
        print(f"facts: {root}: no release folder", file=sys.stderr)
        return 2
    shipped = shipped_coverage(with_ops=True)
    print("release  MPS-kernel  with a mined fact  from binary  from common_mps  messages (tied)  checks (tied)"
          "  with any fact (mined or curated)  dtypes with a fact")
    for rel, doc in releases.items():
        c = doc["coverage"]
        mined_ops = set(doc.pop("_ops"))
        ship = shipped.get(rel)
        if ship is not None:
            c["overloads_with_any_fact"] = len(mined_ops | ship["ops"])
            c["dtypes_with_a_fact"] = sorted(set(c["dtypes_named"]) | set(ship["dtypes"]))
        any_fact = c.get("overloads_with_any_fact", "-")
        dtypes = len(c.get("dtypes_with_a_fact", c["dtypes_named"]))
        print(f"{rel:8} {c['mps_kernel_overloads']:10} {c['overloads_with_a_fact']:17} "
              f"{c['overloads_with_a_binary_message']:12} {c['overloads_with_a_common_mps_dtype_fact']:15} "
              f"{c['binary_messages']:9} ({c['binary_messages_tied_to_an_op']:3})  "
              f"{c['checks_read']:8} ({c['checks_tied_to_an_op']:2})  {any_fact!s:>32}  {dtypes:18}")
    if args.output:
        Path(args.output).write_text(json.dumps({"schema": SCHEMA, "releases": releases}, indent=1) + "\n",
                                     encoding="utf-8")
    if args.merged:
        text = json.dumps(merged(releases), indent=0, sort_keys=False) + "\n"
        if args.merged.endswith(".gz"):
            import gzip

            Path(args.merged).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
        else:
            Path(args.merged).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Bring one release folder per PyTorch release for the facts miner (maintainers only, never at run time).

    PYTHONPATH=src python -m mpsready.ops.build.harvest --out /tmp/torchsrc 2.3.1 2.5.1 ...
    PYTHONPATH=src python -m mpsready.ops.build.harvest --out /tmp/torchsrc-x86 --platform macosx_10_9_x86_64 2.2.2

Per release V: ``pip download`` its macOS arm64 wheel (``fetch.download``: ``macosx_14_0_arm64`` for 2.12+,
``macosx_11_0_arm64`` before), then write into ``OUT/V/``, under the paths the miner reads
(:mod:`mpsready.ops.build.facts`):

* ``aten/src/ATen/native/native_functions.yaml`` (the wheel's ``torchgen/packaged`` copy, byte-identical to the
  source tree's, research note §1);
* ``torch/testing/_internal/common_mps.py`` (wheels >= 2.8 only, research note §3);
* ``torch/_inductor/codegen/mps.py`` and ``mps_device_op_overrides.py`` (wheels >= 2.7: Inductor's Metal code
  generation, read by :mod:`mpsready.ops.build.inductor`);
* ``aten/src/ATen/native/mps/*.h``: the MPS headers the wheel ships under ``torch/include`` (the ``.mm`` operator
  sources are not in wheels: see ``BINARY_STRINGS``);
* ``BINARY_STRINGS`` (``libtorch_cpu.mps_strings.txt``): every printable string of the wheel's
  ``torch/lib/libtorch_cpu.dylib`` that reads as a message (it has a space) and names MPS, macOS or Metal, one per
  line, in the library's order: what that release's MPS code can print, read from the binary itself (research
  note §2.3, §6: the "MPS does not support cumsum op with int64 input" kind of text);
* ``wheel.json``: the wheel's name, sha256, size and ``git_version`` (its source commit), and what was kept.

The wheel is deleted afterwards; a finished folder (``wheel.json`` present) is reused. Nothing here is shipped:
the miner's output (facts with their source and release) is.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mpsready.ops.build import fetch

BINARY_STRINGS = "libtorch_cpu.mps_strings.txt"
DYLIB = "torch/lib/libtorch_cpu.dylib"
HEADERS = "torch/include/ATen/native/mps/"
MEMBERS = {"torchgen/packaged/ATen/native/native_functions.yaml": "aten/src/ATen/native/native_functions.yaml",
           "torch/testing/_internal/common_mps.py": "torch/testing/_internal/common_mps.py",
           "torch/version.py": "torch/version.py",
           # Inductor's Metal code generation (2.7+): pure Python, what a compiled region on MPS can lower
           "torch/_inductor/codegen/mps.py": "torch/_inductor/codegen/mps.py",
           "torch/_inductor/codegen/mps_device_op_overrides.py": "torch/_inductor/codegen/mps_device_op_overrides.py"}
# a printable run of the binary (bytes, not source text); a message has a space and names MPS, macOS or Metal
_RUN = re.compile(rb"[\x20-\x7e]{12,}")
_MPS_WORD = re.compile(r"\bMPS|MPS\b|\bmps\b|\b[Mm]ac[Oo][Ss]|\bMetal\b|MPSGraph|MPSNDArray|is_mps\(\)")
_SYMBOL_PREFIXES = ("_Z", "__Z", "N2at", "N3c10", "_OBJC", "__OBJC", "/System/", "/usr/lib/", "-[", "+[", " -f")
# the code generator's device asserts (one per RegisterMPS.cpp wrapper, thousands, no fact about an op)
_CODEGEN_ASSERT = re.compile(r"INTERNAL ASSERT FAILED at \"[^\"]*/build/aten/src/ATen/Register")


def release_dirs(root: Path) -> list[Path]:
    """The release folders of a harvest (``--out``: one folder per release, named by its version), oldest first.
    Raises ``ValueError`` when ``root`` is not a folder or a folder in it is not named by a version (what the
    miners print, exit 2)."""
    from packaging.version import InvalidVersion, Version

    if not root.is_dir():
        raise ValueError(f"{root}: not a folder")
    try:
        return sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: Version(p.name))
    except InvalidVersion as exc:
        raise ValueError(f"{root}: a release folder is not named by its version ({exc})") from None


def mine_each(root: Path, mine: Callable[[Path], dict[str, Any] | None], tool: str) -> dict[str, Any] | None:
    """``{release: facts}`` of ``mine`` over every release folder of ``root`` (oldest first; a folder ``mine`` answers
    None for is left out), or None after printing ``<tool>: <error>`` on stderr when a folder cannot be read or parsed
    (``OSError``, ``SyntaxError``, ``ValueError``: the miner exits 2)."""
    out: dict[str, Any] = {}
    try:
        for sub in release_dirs(root):
            facts = mine(sub)
            if facts is not None:
                out[sub.name] = facts
    except (OSError, SyntaxError, ValueError) as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return None
    return out


def binary_messages(data: bytes) -> list[str]:
    """The message-like strings of a binary that name MPS, macOS or Metal, in order, without duplicates."""
    out, seen = [], set()
    for m in _RUN.finditer(data):
        s = m.group().decode("ascii")
        if (" " not in s.strip() or s.startswith(_SYMBOL_PREFIXES) or not _MPS_WORD.search(s)
                or _CODEGEN_ASSERT.search(s)):
            continue
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def _git_version(text: str) -> str | None:
    for node in ast.parse(text).body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and any(isinstance(t, ast.Name) and t.id == "git_version" for t in node.targets)):
            return str(node.value.value)
    return None


def harvest_wheel(wheel: Path, dest: Path) -> dict:
    """Write the release folder ``dest`` from ``wheel`` (module docstring); returns its ``wheel.json``."""
    dest.mkdir(parents=True, exist_ok=True)
    kept: list[str] = []
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        for member, path in MEMBERS.items():
            if member in names:
                (dest / path).parent.mkdir(parents=True, exist_ok=True)
                (dest / path).write_bytes(zf.read(member))
                kept.append(path)
        for member in names:
            if member.startswith(HEADERS) and member.endswith(".h"):
                path = "aten/src/ATen/native/mps/" + member[len(HEADERS):]
                (dest / path).parent.mkdir(parents=True, exist_ok=True)
                (dest / path).write_bytes(zf.read(member))
                kept.append(path)
        messages = binary_messages(zf.read(DYLIB)) if DYLIB in names else []
    (dest / BINARY_STRINGS).write_text("".join(m + "\n" for m in messages), encoding="utf-8")
    version_py = dest / "torch/version.py"
    info = {"wheel": wheel.name, "sha256": fetch.sha256_of(wheel), "size": wheel.stat().st_size,
            "git_version": _git_version(version_py.read_text()) if version_py.exists() else None,
            "kept": kept, "binary_strings": len(messages)}
    (dest / fetch.MANIFEST).write_text(json.dumps(info, indent=1) + "\n")
    return info


def harvest(version: str, out: Path, platforms: tuple[str, ...] = fetch.PLATFORMS) -> dict:
    dest = out / version
    if (dest / fetch.MANIFEST).exists():
        return json.loads((dest / fetch.MANIFEST).read_text())
    with tempfile.TemporaryDirectory(prefix="mpsready-wheel-") as tmp:
        wheel = fetch.download(version, Path(tmp), platforms)  # macOS arm64 first (fetch.PLATFORMS)
        if "macosx" not in wheel.name:
            raise RuntimeError(f"{version}: no macOS wheel ({wheel.name}); the binary strings need one")
        return harvest_wheel(wheel, dest)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.harvest", description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="+")
    ap.add_argument("--out", type=Path, required=True, help="folder of release folders (outside the repository)")
    ap.add_argument("--platform", action="append", metavar="TAG",
                    help="pip platform tag(s) to try instead of the arm64 ones, e.g. macosx_10_9_x86_64 (an Intel "
                         "Mac's wheel: 2.2.2 is the last; its folder compares with the arm64 one by diff)")
    args = ap.parse_args(argv)
    platforms = tuple(args.platform) if args.platform else fetch.PLATFORMS
    rc = 0
    for version in args.versions:
        try:
            info = harvest(version, args.out, platforms)
            print(f"{version}: {info['wheel']} sha256={info['sha256'][:12]} git={info['git_version']} "
                  f"files={len(info['kept'])} binary strings={info['binary_strings']}", flush=True)
        except Exception as exc:  # keep going: report which releases are missing
            print(f"{version}: FAILED {exc}", file=sys.stderr, flush=True)
            rc = 1
    return rc


if __name__ == "__main__":
    raise SystemExit(main())

"""What leaves the lab: ``manifest.json`` and ``MANIFEST.md`` of a kit, the sign-off, and the check that a kit
is still what was signed.

``manifest.json`` (schema ``mpsready.kit`` v1) lists every file of the kit with its size and sha256, every file
of the project left out with its reason, and the exact commands the script runs. Its own sha256 (of its bytes)
is *the manifest hash*. ``mpsready kit --approve DIR --by NAME --rule TEXT`` writes ``APPROVAL.json`` (schema
``mpsready.kit.approval`` v1: who, when in UTC, the manifest hash, the rule) and rewrites ``MANIFEST.md``,
whose first line says whether and by whom the kit was signed off.

:func:`check` hashes the kit's files again (the script does it on the Mac before anything runs, and writes the
result into the results archive): a sign-off holds only while the manifest hash is the one signed and every
file matches it. Standard library only (the script runs it before any install; ``report`` reads it).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "mpsready.kit"
APPROVAL_SCHEMA = "mpsready.kit.approval"
CHECK_SCHEMA = "mpsready.kit.check"
MANIFEST_JSON = "manifest.json"
MANIFEST_MD = "MANIFEST.md"
APPROVAL = "APPROVAL.json"
# files and folders of a kit folder that the manifest does not list: itself, its sign-off, what a run adds
NOT_LISTED = (MANIFEST_JSON, MANIFEST_MD, APPROVAL, "results", "results.tar.gz", ".venv")
CACHE_DIRS = ("__pycache__", ".pytest_cache")  # what running the kit's code may leave in any folder: never listed
UNSIGNED_LINE = ("UNSIGNED: no person has confirmed that the lab's data rules allow these files to leave "
                 "(mpsready kit --approve DIR --by NAME --rule TEXT)")


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def signed_line(approval: dict[str, Any]) -> str:
    return (f"SIGNED OFF by {approval.get('by')} on {approval.get('when')} under the rule: {approval.get('rule')} "
            f"(manifest sha256 {approval.get('manifest_sha256')})")


def kit_files(kit: str) -> list[str]:
    """Every regular file of the kit folder the manifest should list (POSIX paths, sorted)."""
    out = []
    for dirpath, dirs, names in os.walk(kit):
        rel = os.path.relpath(dirpath, kit).replace(os.sep, "/")
        rel = "" if rel == "." else rel
        if not rel:
            dirs[:] = [d for d in dirs if d not in NOT_LISTED]
            names = [n for n in names if n not in NOT_LISTED]
        dirs[:] = sorted(d for d in dirs if d not in CACHE_DIRS)
        for n in sorted(names):
            full = os.path.join(dirpath, n)
            if os.path.isfile(full) and not os.path.islink(full):
                out.append(f"{rel}/{n}" if rel else n)
    return sorted(out)


def render_md(doc: dict[str, Any], approval: dict[str, Any] | None) -> str:
    """``MANIFEST.md``: the sign-off state on the first line, then what leaves, what stays, what runs."""
    lines = [signed_line(approval) if approval else UNSIGNED_LINE, "",
             f"# What leaves the lab: kit of {doc.get('project')}", "",
             f"Built by mpsready {doc.get('mpsready')} on {doc.get('created')} for device `{doc.get('device')}`, "
             f"entry `{doc.get('entry')}`, PyTorch {doc.get('torch')}.", ""]
    files = doc.get("files") or []
    total = sum(int(f.get("bytes") or 0) for f in files)
    lines += [f"## Files in the kit ({len(files)}, {total} bytes)", "", "| file | bytes | sha256 |", "|---|---|---|"]
    lines += [f"| `{f['path']}` | {f['bytes']} | `{f['sha256']}` |" for f in files]
    left = doc.get("left_out") or []
    lines += ["", f"## Left out of the kit ({len(left)})", "", "| path | reason | detail |", "|---|---|---|"]
    for x in left:
        what = x["path"] + (f" ({x['files']} files)" if "files" in x else "")
        lines.append(f"| `{what}` | {x['reason']} | {x['detail']} |")
    inputs = doc.get("inputs")
    lines += ["", "## Inputs", ""]
    if inputs:
        lines.append(f"`inputs.json`: the shapes, dtypes and value ranges (min, max) of {inputs.get('tensors')} "
                     f"input tensor(s) from the run record `{inputs.get('from')}`; the Mac draws random inputs "
                     "from them. No input value leaves.")
    else:
        lines.append("No input spec: the entry builds its own batch on the Mac.")
    lines += ["", "## Commands the Mac runs (`sh run-on-mac.sh`)", "", "```"] + list(doc.get("commands") or []) + \
             ["```", "", "## What comes back", "", str(doc.get("comes_back") or ""), ""]
    return "\n".join(lines)


def write(kit: str, doc: dict[str, Any]) -> str:
    """Write ``manifest.json`` and an unsigned ``MANIFEST.md`` (a previous sign-off no longer holds: removed);
    returns the manifest hash."""
    data = (json.dumps(doc, indent=2, sort_keys=False) + "\n").encode("utf-8")
    with open(os.path.join(kit, MANIFEST_JSON), "wb") as fh:
        fh.write(data)
    stale = os.path.join(kit, APPROVAL)
    if os.path.exists(stale):
        os.unlink(stale)
    with open(os.path.join(kit, MANIFEST_MD), "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(render_md(doc, None))
    return sha256_bytes(data)


def read_json(path: str) -> dict[str, Any] | None:
    """A small JSON object from ``path`` (a regular file of at most 16 MiB), else ``None``."""
    try:
        if not os.path.isfile(path) or os.path.islink(path) or os.path.getsize(path) > 16 << 20:
            return None
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


@dataclass
class KitCheck:
    """A kit folder compared with its manifest (:func:`check`)."""

    manifest_sha256: str | None
    approval: dict[str, Any] | None
    changed: list[str] = field(default_factory=list)  # listed, content differs
    missing: list[str] = field(default_factory=list)  # listed, absent
    added: list[str] = field(default_factory=list)  # present, not listed

    @property
    def intact(self) -> bool:
        return self.manifest_sha256 is not None and not (self.changed or self.missing or self.added)

    @property
    def signed(self) -> bool:
        """A sign-off of exactly this manifest, with every file as listed."""
        return bool(self.approval) and self.intact and \
            (self.approval or {}).get("manifest_sha256") == self.manifest_sha256

    def to_dict(self) -> dict[str, Any]:
        from mpsready.schema import envelope

        return envelope(CHECK_SCHEMA, 1, basis="observed", manifest_sha256=self.manifest_sha256,
                        approval=self.approval, changed=self.changed, missing=self.missing, added=self.added,
                        intact=self.intact, signed=self.signed)


def check(kit: str) -> KitCheck:
    """Hash the kit's files against ``manifest.json`` and read ``APPROVAL.json``."""
    path = os.path.join(kit, MANIFEST_JSON)
    try:
        with open(path, "rb") as fh:
            data = fh.read(16 << 20)
        doc = json.loads(data)
    except (OSError, ValueError):
        return KitCheck(None, None)
    approval = read_json(os.path.join(kit, APPROVAL))
    out = KitCheck(sha256_bytes(data), approval)
    listed = {f.get("path"): f.get("sha256") for f in doc.get("files") or [] if isinstance(f, dict)}
    present = set(kit_files(kit))
    for rel, digest in sorted(listed.items()):
        if rel not in present:
            out.missing.append(str(rel))
        elif sha256_file(os.path.join(kit, str(rel))) != digest:
            out.changed.append(str(rel))
    out.added = sorted(present - set(listed))
    return out


def approve(kit: str, by: str, rule: str, when: str) -> dict[str, Any]:
    """Record a sign-off of the kit as it is now; raises ``ValueError`` when the kit no longer matches its
    manifest (nobody may sign what the manifest does not describe)."""
    state = check(kit)
    if state.manifest_sha256 is None:
        raise ValueError(f"{kit} has no readable {MANIFEST_JSON}: not a kit")
    if not state.intact:
        raise ValueError(f"{kit} no longer matches its manifest (changed: {state.changed}, missing: {state.missing}, "
                         f"added: {state.added}); build the kit again before signing it off")
    approval = {"schema": {"name": APPROVAL_SCHEMA, "version": 1}, "by": by, "when": when,
                "manifest_sha256": state.manifest_sha256, "rule": rule}
    with open(os.path.join(kit, APPROVAL), "w", encoding="utf-8") as fh:
        json.dump(approval, fh, indent=2)
        fh.write("\n")
    doc = read_json(os.path.join(kit, MANIFEST_JSON)) or {}
    with open(os.path.join(kit, MANIFEST_MD), "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(render_md(doc, approval))
    return approval

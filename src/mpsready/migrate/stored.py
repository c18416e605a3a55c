"""The plan ``mpsready migrate PATH`` showed, kept so that ``mpsready migrate PATH --apply`` writes it without
planning again when nothing it was planned from has changed.

``migrate PATH`` (the diff, ``--format json`` or ``--verify`` without ``--apply``) writes its plan to
``CACHE/migrate-plan-<digest of PATH>.json`` (``CACHE``: the scan's cache folder, ``$MPSREADY_CACHE_DIR``, else
``$XDG_CACHE_HOME/mpsready``, else ``~/.cache/mpsready``; ``--cache-dir``; ``--no-cache`` turns it off). The
next ``--apply`` of the same PATH reads it and uses it only when all of these are as they were:

- the sha256 of every file the scan reads (each Python file, notebook and dependency declaration the
  project's walk lists, with the same exclusions): an edited, added or removed file can change any file's
  plan (a new ``.cuda()``, the device selection other files follow, the PyTorch floor a requirements file
  declares), so a plan from other bytes is never applied;
- the ``--select``/``--ignore`` codes;
- the mpsready version, the code analyser's version and the digest of the scan's shipped knowledge.

Anything else (or a stored plan that cannot be read) plans again, and the caller says why
(:attr:`Lookup.reason`). :func:`mpsready.migrate.apply.apply_plan` reads each file again right before writing
it and refuses one whose sha256 differs from the plan's, so a file edited after this check is never
overwritten either. Paths are rebuilt from the root and the walked files, never taken from the stored
document: a stored plan can only name files of the project. The file carries a MAC keyed by the user's
secret in a folder of the user's own (:mod:`mpsready.cachefiles`): a planted or edited plan is never used,
and ``--apply`` shows the stored plan's diff before writing it (this process did not show it).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from mpsready import __version__, cachefiles
from mpsready.migrate.engine import EditRecord, FilePlan, FindingRef, ManualRecord, Plan
from mpsready.migrate.leftovers import find_leftovers
from mpsready.scan.cache import content_key
from mpsready.scan.code import ANALYZER_VERSION
from mpsready.scan.config import ScanConfig, with_project_config
from mpsready.scan.walker import walk
from mpsready.schema import utc_now

FORMAT = {"name": "mpsready.migrate.stored-plan", "version": 2}  # 2: manual entries carry their count of findings


@dataclass
class Inputs:
    """What a plan of ``target`` is made from: ``hashes`` ``{relpath: sha256}`` of every file the scan reads,
    ``data`` those files' bytes, ``paths`` their paths as the scan reads them, ``code`` the Python files and
    notebooks among them (relpaths, walk order)."""

    root: Path
    hashes: dict[str, str]
    data: dict[str, bytes]
    paths: dict[str, str]
    code: list[str]


@dataclass
class Lookup:
    """The stored plan when it still holds (``plan``), else ``None`` and why not (``reason``: ``None`` when no
    plan of this path was stored, so there is nothing to say); ``created``: when it was planned."""

    plan: Plan | None
    reason: str | None = None
    created: str | None = None


def store_path(cache_dir: Path, target: str | os.PathLike[str]) -> Path:
    """The file holding the stored plan of ``target`` (a directory or a single file) under ``cache_dir``."""
    return cache_dir / f"migrate-plan-{content_key(os.fsencode(Path(target).resolve()))}.json"


def _knowledge() -> str:
    data = b"".join(resources.files("mpsready.scan").joinpath(f"data/{n}").read_bytes()
                    for n in ("packages.yaml", "cuda_api.yaml"))
    return content_key(data)


def key(target: str | os.PathLike[str], select: tuple[str, ...], ignore: tuple[str, ...]) -> dict[str, Any]:
    """What besides the files' bytes decides a plan: the path, the codes chosen, the versions."""
    return {"target": str(Path(target).resolve()), "select": list(select), "ignore": list(ignore),
            "mpsready": __version__, "analyzer": ANALYZER_VERSION, "knowledge": _knowledge()}


def read_inputs(target: str | os.PathLike[str], config: ScanConfig) -> Inputs:
    """Hash every file a scan of ``target`` reads (the scan's walk with the project's ``[tool.mpsready]``
    exclusions and size limit); a file that cannot be read is left out (the scan reports it, and a plan
    stored while it could be read then differs)."""
    path = Path(target)
    root = path if path.is_dir() else path.parent
    cfg = with_project_config(config, root)
    if path.is_dir():
        files = walk(root, exclude=cfg.exclude, max_file_size=cfg.max_file_size, gitignore=cfg.gitignore).files
        listed = [(pf.relpath, pf.abspath, pf.python or pf.notebook) for pf in files]
    else:
        listed = [(path.name, str(path), True)]
    out = Inputs(root, {}, {}, {}, [])
    for rel, abspath, code in listed:
        try:
            with open(abspath, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        out.hashes[rel], out.data[rel], out.paths[rel] = hashlib.sha256(data).hexdigest(), data, abspath
        if code:
            out.code.append(rel)
    return out


def save(cache_dir: Path, target: str | os.PathLike[str], plan: Plan, plan_key: dict[str, Any],
         inputs: Inputs) -> None:
    """Write ``plan`` with its key and the inputs' hashes, atomically; a folder that cannot be written is
    ignored (the next ``--apply`` then plans again)."""
    doc = {"format": FORMAT, "created": utc_now(), "key": plan_key, "inputs": inputs.hashes,
           "plan": _plan_doc(plan)}
    dest = store_path(cache_dir, target)
    key = cachefiles.open_folder(cache_dir)
    if key is None:  # not the user's own folder (warned): nothing stored, the next --apply plans again
        return
    try:
        cachefiles.write_sealed(cache_dir, dest, key, json.dumps(doc, separators=(",", ":")).encode(),
                                ".migrate-plan-")
    except OSError:
        pass


def forget(cache_dir: Path, target: str | os.PathLike[str]) -> None:
    """Remove the stored plan of ``target`` (after ``--apply``: the files it was planned from changed)."""
    try:
        store_path(cache_dir, target).unlink()
    except OSError:
        pass


def load(cache_dir: Path, target: str | os.PathLike[str], plan_key: dict[str, Any], inputs: Inputs) -> Lookup:
    """The stored plan of ``target`` when its key equals ``plan_key`` and its inputs' hashes equal
    ``inputs.hashes``; otherwise ``Lookup(None, reason)``. Never raises for a damaged or foreign document."""
    path = store_path(cache_dir, target)
    if not os.path.lexists(path):
        return Lookup(None)
    key = cachefiles.open_folder(cache_dir, create=False)
    if key is None:
        return Lookup(None, "the cache folder is not this user's own")
    try:
        raw = cachefiles.read_regular(path)
    except OSError:
        return Lookup(None, "the stored plan is not a regular file of bounded size")
    text = cachefiles.unseal(key, raw)
    if text is None:
        return Lookup(None, "the stored plan's MAC does not check (not written by this user's mpsready)")
    try:
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            return Lookup(None, "the stored plan is of another format")
        reason = _difference(doc["key"], plan_key) or _changed(doc["inputs"], inputs.hashes)
        if reason:
            return Lookup(None, reason)
        return Lookup(_plan(doc["plan"], inputs), created=str(doc["created"]))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
        return Lookup(None, "the stored plan could not be read")


def _difference(stored: dict[str, Any], now: dict[str, Any]) -> str | None:
    for field, say in (("mpsready", "mpsready version"), ("analyzer", "code analyser"),
                       ("knowledge", "shipped knowledge")):
        if stored.get(field) != now[field]:
            return f"the plan was shown by another {say} ({stored.get(field)} against {now[field]})"
    for field in ("select", "ignore"):
        if stored.get(field) != now[field]:
            shown = ",".join(stored.get(field) or []) or "none"
            return f"--{field} {','.join(now[field]) or 'none'} differs from the plan shown's ({shown})"
    if stored.get("target") != now["target"]:
        return "the stored plan is of another path"
    return None


def _changed(stored: dict[str, str], now: dict[str, str]) -> str | None:
    if not isinstance(stored, dict):
        raise TypeError("inputs")
    for rel in sorted(set(stored) | set(now)):
        if rel not in now:
            return f"{rel} is gone since the plan was shown"
        if rel not in stored:
            return f"{rel} is new since the plan was shown"
        if stored[rel] != now[rel]:
            return f"{rel} changed since the plan was shown"
    return None


def _plan_doc(plan: Plan) -> dict[str, Any]:
    return {
        "torch_floor": list(plan.torch_floor) if plan.torch_floor else None,
        "findings_before": plan.findings_before,
        "files": [{"path": fp.path, "sha256": fp.sha256, "after": fp.after,
                   "edits": [[e.code, e.line, e.what, e.cell, e.review, e.needs_torch] for e in fp.edits]}
                  for fp in plan.files],
        "manual": [[m.code, m.path, m.line, m.reason, m.count] for m in plan.manual],
        "kept": [[m.code, m.path, m.line, m.reason, m.count] for m in plan.kept],
        "fixed": [[r.code, r.path, r.line, r.cell, r.cell_line] for r in plan.fixed],
        "errors": plan.errors,
        "rounds": plan.rounds,
    }


def _plan(doc: dict[str, Any], inputs: Inputs) -> Plan:
    """The stored plan over the files as they are now (their hashes already equal the stored ones): the text
    before from the bytes just read, paths under the root; the leftovers of a killed ``--apply`` looked up
    again (they are no input of the plan)."""
    floor = doc["torch_floor"]
    plan = Plan(str(inputs.root), torch_floor=(int(floor[0]), int(floor[1])) if floor else None,
                findings_before=int(doc["findings_before"]))
    for f in doc["files"]:
        rel = str(f["path"])
        if inputs.hashes[rel] != f["sha256"]:  # a KeyError for a path outside the project: not read
            raise ValueError(rel)
        fp = FilePlan(rel, inputs.paths[rel], inputs.data[rel].decode("utf-8"), str(f["after"]), f["sha256"])
        fp.edits = [EditRecord(*e) for e in f["edits"]]
        plan.files.append(fp)
    plan.manual = [ManualRecord(*m) for m in doc["manual"]]
    plan.kept = [ManualRecord(*m) for m in doc["kept"]]
    plan.fixed = [FindingRef(*r) for r in doc["fixed"]]
    plan.errors = [str(e) for e in doc["errors"]]
    plan.rounds = int(doc.get("rounds", 1))
    plan.leftovers = find_leftovers(inputs.root, [inputs.paths[rel] for rel in inputs.code])
    return plan

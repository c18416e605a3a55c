"""Build a kit folder and its archive: the project's code (:mod:`.select`), mpsready itself, the input spec, the
script (:mod:`.script`) and the manifest (:mod:`.manifest`).

Layout of ``DIR``::

    run-on-mac.sh        the script (POSIX sh)
    MANIFEST.md          first line: the sign-off, or UNSIGNED; then what leaves, what stays, what runs
    manifest.json        schema mpsready.kit v1 (sizes and sha256 of every file below)
    project/             the project's code and declaration files, nothing else
    tool/mpsready/       mpsready's own source (run from PYTHONPATH: nothing to build on the Mac)
    tool/requirements.txt  mpsready's requirements, without torch
    deps.txt             the project's declared dependencies, one per line (torch left out: the kit names it)
    constraints.txt      the PyTorch release, so no dependency install replaces it
    inputs.json          with --record: the input spec (schema mpsready.inputs v1) the Mac replays

and ``DIR.tar.gz`` beside it (the same folder, made again by ``--approve``).
"""

from __future__ import annotations

import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpsready.errors import UsageError
from mpsready.kit import manifest, script
from mpsready.kit.select import Selection, select
from mpsready.schema import envelope

INPUTS_SCHEMA = "mpsready.inputs"
COMES_BACK = ("`results.tar.gz` in the kit folder: the environment record, the run records (statistics and "
              "checksums, never raw tensors), the operators traced on the device, the comparison of the two "
              "records, each test's outcome with the first line of its error, the kit check (which manifest ran, "
              "which sign-off), and the last 20,000 characters of each command's output (which hold whatever the "
              "project prints). Read it with `mpsready report --mac-results results.tar.gz`.")


@dataclass(frozen=True)
class KitRequest:
    project: Path
    entry: str
    out: Path
    device: str = "mps"
    torch: str | None = None
    tests: bool = False
    steps: int = 6
    record: Path | None = None
    reference: Path | None = None  # a CUDA record on synthetic inputs: the Mac compares its own with it


@dataclass(frozen=True)
class Built:
    kit: Path
    archive: Path
    manifest_sha256: str
    selection: Selection


def torch_spec(torch: str | None) -> str:
    """The pip requirement of the PyTorch release: ``--torch 2.5.1`` -> ``torch==2.5.1``; default the release
    installed here (its local ``+cpu`` part dropped), else any release."""
    from packaging.version import InvalidVersion, Version

    if torch is None:
        try:
            from importlib.metadata import version

            torch = version("torch")
        except Exception:  # not installed here: the newest on the Mac
            return "torch"
    try:
        v = Version(torch)
    except InvalidVersion:
        raise UsageError(f"--torch must be a PyTorch release such as 2.5.1, got {torch!r}") from None
    return f"torch=={v.public}" if len(v.release) >= 3 else f"torch=={v.public}.*"


def _check_entry(req: KitRequest, sel: Selection) -> None:
    target, sep, func = req.entry.rpartition(":")
    if not sep or not target or not func:
        raise UsageError(f"--entry must look like 'module:function' or 'path/file.py:function', got {req.entry!r}")
    if target.endswith(".py"):
        rel = Path(target).as_posix().lstrip("./")
        if rel not in {f.relpath for f in sel.files}:
            left = next((x for x in sel.left_out if x.relpath == rel), None)
            why = f" (left out: {left.reason})" if left else ""
            raise UsageError(f"--entry file {target} is not among the project's code files{why}")
    else:  # module:function: its file when the project holds it (an installed module is not ours to read)
        base = target.replace(".", "/")
        rel = next((r for r in (f"{base}.py", f"{base}/__init__.py") if r in {f.relpath for f in sel.files}), "")
    if rel:
        _check_entry_function(req, rel, func)


def _check_entry_function(req: KitRequest, rel: str, func: str) -> None:
    """Refuse (exit 2) an entry whose function the file does not define at module level (h40c: ``--entry
    train.py:main`` was accepted for a train.py without ``main``, and the Mac run failed at import). The file is
    parsed with ``ast``, never imported; a name bound at module level in any way counts (``def``, ``class``, an
    assignment, an import, inside a top-level ``if``/``try``/``with``); a file that does not parse here (newer
    syntax), or a ``from M import *``, is not judged."""
    import ast

    name = func.split(".", 1)[0]
    try:
        tree = ast.parse((req.project / rel).read_bytes(), filename=rel)
    except (SyntaxError, ValueError, OSError):
        return
    bound: set[str] = set()
    star = False
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            star = star or any(a.name == "*" for a in node.names)
            bound.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or type(node).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                todo.extend(getattr(node, field, []))
            todo.extend(s for h in getattr(node, "handlers", []) for s in h.body)
    if name not in bound and not star:
        defined = sorted(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
        raise UsageError(f"--entry {req.entry}: {rel} defines no {name!r} at module level (read with ast, not "
                         "imported); its functions: " + (", ".join(defined) or "none"))


def build(req: KitRequest) -> Built:
    if not req.project.is_dir():
        raise UsageError(f"project {req.project} is not a directory")
    out = req.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"-o {out} exists and is not an empty directory")
    from mpsready.output import missing_parent

    parent = missing_parent(out)
    if parent is not None:  # h40c: /nonexist/a/b was created whole
        raise UsageError(f"-o {out}: the folder {parent} does not exist (only the last level is created)")
    archive = out.with_name(out.name + ".tar.gz")
    if archive.exists():
        raise UsageError(f"{archive} exists: the kit's archive would replace it (choose another -o)")
    if req.steps < 1:
        raise UsageError("--steps must be at least 1")
    sel = select(req.project)
    _check_entry(req, sel)
    if req.reference is not None:
        check_reference(req.reference)
    spec_from = req.record or req.reference
    inputs = _inputs(spec_from) if spec_from is not None else None
    spec = torch_spec(req.torch)
    created = not out.exists()
    try:
        return _write_kit(req, sel, out, spec, inputs)
    except OSError as exc:  # a folder that cannot be made or written: the user's input, not a bug
        if created:  # what this call made goes; a folder the user gave (empty, checked above) is emptied
            shutil.rmtree(out, ignore_errors=True)
        elif out.is_dir():
            for child in out.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        raise UsageError(f"-o {out}: cannot write the kit: {exc.strerror or exc}") from None


def _write_kit(req: KitRequest, sel: Selection, out: Path, spec: str, inputs: dict[str, Any] | None) -> Built:
    out.mkdir(exist_ok=True)  # its parent was checked (missing_parent)
    for f in sel.files:
        dest = out / "project" / f.relpath
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f.abspath, dest)
    _copy_tool(out / "tool", req.tests)
    (out / "deps.txt").write_text("".join(d + "\n" for d in declared(req.project)), encoding="utf-8")
    (out / "constraints.txt").write_text(spec + "\n", encoding="utf-8")
    if req.reference is not None:
        (out / "reference").mkdir()
        for name in ("record.json", "tensors.jsonl"):
            shutil.copyfile(req.reference / name, out / "reference" / name)
    if inputs is not None:
        import json

        (out / "inputs.json").write_text(json.dumps(inputs, indent=2) + "\n", encoding="utf-8")
    plan = script.Plan(req.entry, req.device, spec, req.tests, req.steps, inputs is not None,
                       reference=req.reference is not None)
    sh = out / script.SCRIPT
    sh.write_text(script.render(plan), encoding="utf-8")
    sh.chmod(0o755)
    doc = _manifest_doc(req, sel, plan, out, inputs)
    digest = manifest.write(str(out), doc)
    return Built(out, pack(out), digest, sel)


def _manifest_doc(req: KitRequest, sel: Selection, plan: script.Plan, out: Path,
                  inputs: dict[str, Any] | None) -> dict[str, Any]:
    files = [{"path": rel, "bytes": (out / rel).stat().st_size, "sha256": manifest.sha256_file(out / rel)}
             for rel in manifest.kit_files(str(out))]
    return envelope(manifest.SCHEMA, 1, project=req.project.resolve().name, device=req.device, entry=req.entry,
                    torch=plan.torch_spec, tests=req.tests, steps=req.steps, files=files,
                    left_out=[x.to_dict() for x in sel.left_out],
                    inputs=None if inputs is None else {"from": inputs["from"],
                                                        "tensors": len(inputs["inputs"].get("tensors") or [])},
                    commands=script.commands(plan), comes_back=COMES_BACK)


def pack(kit: Path) -> Path:
    """``KIT.tar.gz`` beside ``kit``: the folder under its own name (results and the venv left out)."""
    target = kit.with_name(kit.name + ".tar.gz")
    tmp = target.with_name(target.name + ".partial")

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = info.name.split("/")
        if len(parts) > 1 and parts[1] in ("results", "results.tar.gz", ".venv"):
            return None
        if not (info.isfile() or info.isdir()):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    try:
        with tarfile.open(tmp, "w:gz") as tar:
            tar.add(kit, arcname=kit.name, filter=keep)
        os.replace(tmp, target)
    except BaseException:  # no half-written archive is left beside the kit (an OSError, Ctrl-C)
        if tmp.is_file() and not tmp.is_symlink():
            tmp.unlink()
        raise
    return target


def _inputs(record: Path) -> dict[str, Any]:
    from mpsready.record.layout import RecordError, RunRecord

    try:
        rec = RunRecord.open(record)
    except RecordError as exc:
        raise UsageError(f"--record: {exc}") from None
    inputs = rec.manifest.get("inputs")
    if not isinstance(inputs, dict) or not inputs.get("structure") or not inputs.get("tensors"):
        raise UsageError(f"--record: {record} records no input shapes (its data stage never passed)")
    where = f"{rec.manifest.get('device')} record of {rec.manifest.get('created')} ({Path(record).name})"
    return envelope(INPUTS_SCHEMA, 1, basis="observed", **{"from": where}, entry=rec.manifest.get("entry"),
                    inputs={"structure": inputs["structure"], "tensors": inputs["tensors"]})


def check_reference(path: Path) -> None:
    """A reference the Mac can compare with: a readable run record, without raw tensors (they would leave the lab),
    recorded on synthetic inputs (else the two records would hold different batches)."""
    from mpsready.record.layout import RecordError, RunRecord

    try:
        m = RunRecord.open(path).manifest
    except RecordError as exc:
        raise UsageError(f"--reference: {exc}") from None
    if m.get("raw_tensors"):
        raise UsageError(f"--reference: {path} holds raw tensors (--save-tensors): they would leave the lab")
    if not m.get("synthetic_inputs"):
        raise UsageError(f"--reference: {path} was not recorded with --synthetic-inputs: the Mac's step would run "
                         "on another batch (record it with the kit's --device cuda first)")
    if not (Path(path) / "tensors.jsonl").is_file():
        raise UsageError(f"--reference: {path} has no tensors.jsonl")


def _copy_tool(dest: Path, tests: bool) -> None:
    import mpsready

    src = Path(mpsready.__file__).resolve().parent
    shutil.copytree(src, dest / "mpsready",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "examples", "*.partial"))
    (dest / "requirements.txt").write_text("".join(r + "\n" for r in tool_requirements(tests)), encoding="utf-8")


FALLBACK_REQUIREMENTS = ("libcst>=1.1", "markdown-it-py>=2.2", "packaging>=22", "pathspec>=0.12", "PyYAML>=6",
                         "rich>=13", "tomli>=2; python_version < '3.11'", "numpy>=1.24", "safetensors>=0.4")


def tool_requirements(tests: bool) -> list[str]:
    """mpsready's requirements and its ``torch`` extra, without torch itself (the kit names the release)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        from importlib.metadata import requires

        raw = requires("mpsready") or []
    except Exception:  # running from a source tree without metadata
        raw = list(FALLBACK_REQUIREMENTS)
    out = []
    for text in raw:
        try:
            r = Requirement(text)
        except InvalidRequirement:
            continue
        marker = str(r.marker) if r.marker else ""
        if "extra" in marker:
            if not r.marker or not r.marker.evaluate({"extra": "torch"}) or r.name == "torch":
                continue
            r.marker = None
        out.append(str(r))
    return sorted(set(out)) + (["pytest>=7"] if tests else [])


def declared(project: Path) -> list[str]:
    """The project's declared dependencies, torch left out: ``requirements.txt`` lines that are requirements
    (options, includes, URLs and editables skipped) and ``[project].dependencies`` of ``pyproject.toml``."""
    from packaging.requirements import InvalidRequirement, Requirement

    texts: list[str] = []
    req_file = project / "requirements.txt"
    if req_file.is_file():
        for line in req_file.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith(("#", "-")):
                texts.append(line)
    pyproject = project / "pyproject.toml"
    if pyproject.is_file():
        from mpsready.scan.sources import tomlfile

        try:
            doc = tomlfile.loads(pyproject.read_text(encoding="utf-8", errors="replace"))
            texts += [d for d in (doc.get("project") or {}).get("dependencies") or [] if isinstance(d, str)]
        except (*tomlfile.TOMLDecodeError, AttributeError):  # unreadable: its dependencies stay undeclared
            pass
    out: list[str] = []
    for text in texts:
        try:
            r = Requirement(text)
        except InvalidRequirement:
            continue
        if r.name.lower() != "torch" and r.url is None and str(r) not in out:
            out.append(str(r))
    return out

"""``scan_path``: walk a project, read every declaration and Python file, and judge the findings.

The scan only reads files: it never imports or executes the project and never writes into it (the
cache lives outside, see :mod:`mpsready.scan.cache`). Every file problem becomes an INP finding and
the rest of the tree is still scanned.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import os
import stat
import time
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from mpsready import rules as registry
from mpsready.errors import UsageError
from mpsready.findings import Basis, Finding, Location, Scope, Severity, Verdict, sort_findings
from mpsready.scan import knowledge
from mpsready.scan.cache import MemoCache, ScanCache, content_key
from mpsready.scan.code import CodeResult, analyze_source
from mpsready.scan.code.analyzer import analyze_source_tree
from mpsready.scan.code.suppress import parse_suppression
from mpsready.scan.config import ScanConfig, with_project_config
from mpsready.scan.model import config_imports, fallbacks, flow, kernel_builds
from mpsready.scan.model.core import behind_off_params, core_ops
from mpsready.scan.model.console import with_console_commands, with_walked_files
from mpsready.scan.model.entries import declared_entries, readme_api_flags
from mpsready.scan.model.readme_parts import readme_usage_findings
from mpsready.scan.model.graph import example_collection, mark_reach, off_main_path, root_entries
from mpsready.scan.model.call_sites import decided_by_callers, unused_device_defaults
from mpsready.scan.model.callers import caller_reach
from mpsready.scan.model.reread import SourceTrees
from mpsready.scan.model.project import apply_surfaces, cpu_only_dtypes, off_options
from mpsready.scan.model.remedy import with_remedies
from mpsready.scan.model.torch_pin import judge_by_torch_pin
from mpsready.scan.model.selection import proposed_flags, select_first
from mpsready.scan.report_filter import hidden_gate, report_filter, select_codes
from mpsready.scan.outlook import (Edit, SecondaryPart, Subproject, collection_outlook, ladder, not_verified,
                                    optional_parts, secondary_parts)
from mpsready.scan.rules import deps as D
from mpsready.scan.rules import inputs as I
from mpsready.scan.scope import scope_of, scripts_named_like_tests, set_scripts
from mpsready.scan.sources import SOURCE_NAMES, Dependency, ProjectFiles, RawFinding, all_sources, tomlfile
from mpsready.scan.sources.interface import read_source
from mpsready.scan.walker import ProjectFile, walk

Progress = Callable[[int, int], None]  # (done, total) over Python files
POOL_MIN_FILES = 64  # below this a process pool costs more than it saves
# Python analysed in this process up to this many bytes in all keeps its texts and trees for the project passes
# (model.reread.SourceTrees), so no file is parsed twice; a larger tree (the torch package, 50 MB) would hold
# gigabytes of syntax trees for the few files those passes read, so there they read and parse those few again
KEEP_TREES_BYTES = 8 << 20
_PACKAGE_DECLARATIONS = ("pyproject.toml", "setup.py", "setup.cfg")  # an installable package: no collection
_DECLARATION_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "environment.yml",
                      "environment.yaml", "Pipfile")


@dataclass
class ScanResult:
    """What one scan found. ``findings`` are sorted most severe first and already filtered by the
    config (select/ignore) and inline suppressions; ``outlook`` is the best verdict the static
    evidence allows and ``limiting`` the findings that keep it from being better."""

    root: str
    findings: list[Finding]
    outlook: Verdict
    limiting: list[Finding]
    files_scanned: int
    lines_scanned: int
    seconds: float
    dependencies: list[Dependency] = field(default_factory=list)
    subprojects: list[Subproject] = field(default_factory=list)
    suppressed: int = 0
    cache_hits: int = 0
    suppressed_findings: list[Finding] = field(default_factory=list)  # dropped by an inline ignore comment
    config: ScanConfig = field(default_factory=ScanConfig)
    flags: list[str] = field(default_factory=list)  # the flags / config values the Mac run needs (outlook.ladder)
    edits: list[Edit] = field(default_factory=list)  # the local edits, wirings and swaps it needs
    incomplete: list[str] = field(default_factory=list)  # main-path files that could not be read or parsed
    secondary: list[SecondaryPart] = field(default_factory=list)  # parts off the main path (outlook.secondary_parts)
    commands: list[str] = field(default_factory=list)  # `python train.py --device mps` (outlook.ladder, issue 32)
    optional: list[dict] = field(default_factory=list)  # what optional parts need (outlook.optional_parts, issue 32)
    selection: dict = field(default_factory=dict)  # question 1 of the selection-first verdict (model/selection.py)
    exit_zero: bool = False  # set by the command line's --exit-zero (the exit line says so: scan/exit_reason.py)
    config_ignored: int = 0  # findings taken out of the report by per-file-ignores / ignore-scopes (outlook kept)
    # main-path findings at or above fail-on the project's select / ignore / exclude / per-file-ignores took out of the
    # report: they still set the outlook, and the gate still fails on them (issue 34: exclude = ["**"] exited 0)
    hidden_gate: int = 0
    # what the walk left out (.gitignore, --exclude): "PATH (excluded by WHY)", at most 50 (outlook.excluded, issue 34)
    excluded: list[str] = field(default_factory=list)
    not_verified: list[dict] = field(default_factory=list)  # limits whose reach by calls is not settled (round 10)
    baseline: Any = None  # a scan.baseline.BaselineMatch when --baseline was given (findings then hold the new ones)
    # fail closed (issue 34): declarations that could not be parsed, or code the project's own exclusions hid
    # from a scan that then read no code at all; each also listed in ``incomplete``; the scan exits 1
    unread: list[str] = field(default_factory=list)

    @property
    def torch_floor(self) -> tuple[int, int] | None:
        """The lowest (major, minor) PyTorch the project declares; ``None`` without a lower bound."""
        return registry.fixability().declared_floor(self.dependencies)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def failed(self) -> bool:
        """True (exit code 1) when a finding is at or above ``config.fail_on``, or when a main-path file could
        not be read or parsed: an incomplete outlook never passes a gate."""
        return bool(self.incomplete) or bool(self.hidden_gate) \
            or any(f.severity.rank >= self.config.fail_on.rank for f in self.findings)


def scan_path(path: str | os.PathLike[str], config: ScanConfig | None = None, *,
              progress: Progress | None = None, explicit: frozenset[str] = frozenset(),
              overlay: Mapping[str, bytes] | None = None, memo: MemoCache | None = None) -> ScanResult:
    """Scan the project at ``path`` (a directory or a single file).

    ``config`` defaults to :class:`ScanConfig` merged with ``[tool.mpsready]`` from the project's
    pyproject.toml (fields named in ``explicit`` keep the caller's value). Raises
    :class:`~mpsready.errors.UsageError` when ``path`` does not exist or is not readable.
    ``overlay`` (relative POSIX path -> bytes) is read instead of those files' bytes on disk, and ``memo`` is an
    in-memory analysis cache used when the config names no cache folder: ``migrate`` scans its own edits, in
    memory, with both (:func:`mpsready.migrate.engine.migrate_path`).
    """
    try:
        with gc_paused():  # the whole scan: see gc_paused (declaration readers and findings build no cycles either)
            return _scan(path, config, progress, explicit, overlay or {}, memo)
    finally:
        tomlfile.forget()
        set_scripts(frozenset())  # the parsed root pyproject.toml, shared by the config and the declaration reads


def _scan(path, config: ScanConfig | None, progress: Progress | None, explicit: frozenset[str],
          overlay: Mapping[str, bytes], memo: MemoCache | None) -> ScanResult:
    started = time.perf_counter()
    target = Path(path)
    if not os.path.lexists(target):
        raise UsageError(f"{path}: no such file or directory")
    if not target.exists():
        raise UsageError(f"{path}: broken symbolic link")
    root = target if target.is_dir() else target.parent
    if not os.access(target, os.R_OK):
        raise UsageError(f"{path}: permission denied")
    config = with_project_config(config or ScanConfig(), root, explicit)
    raw: list[RawFinding] = list(config.problems)
    if target.is_dir():
        walked = walk(root, exclude=config.exclude, max_file_size=config.max_file_size, gitignore=config.gitignore)
        files, raw, excluded = walked.files, raw + walked.findings, walked.excluded
    else:
        from mpsready.scan.walker import classify

        excluded = []
        st = target.stat()
        if not stat.S_ISREG(st.st_mode):  # reading a named pipe would block forever
            raise UsageError(f"{path}: not a directory or a regular file")
        files = [ProjectFile(target.name, str(target), st.st_size, st.st_mtime_ns, **classify(target.name))]
        if st.st_size > config.max_file_size:
            raw.append(RawFinding(I.TOO_LARGE, target.name, None,
                                  f"{st.st_size} bytes is above the {config.max_file_size}-byte limit; skipped",
                                  evidence={"bytes": st.st_size, "limit": config.max_file_size}))
            files = []
    project = ProjectFiles(root, config.max_file_size, overlay)

    deps, dep_raw, texts = _declarations(files, project)
    # an included file (-r base.txt) is often also scanned on its own: keep one copy of each
    deps = list({(d.path, d.line, d.name, d.raw): d for d in deps}.values())
    raw += list({(r.rule.code, r.path, r.line, r.message): r for r in dep_raw}.values())
    if deps:
        from mpsready.scan import dependencies as depjudge  # here: a project without declarations skips packaging

        for dep in deps:
            raw += depjudge.judge(dep)
    if target.is_dir() and not deps and not dep_raw:
        raw.append(_no_declaration())

    cache: ScanCache | MemoCache | None = ScanCache(config.cache_dir, root) if config.cache_dir else memo
    code_results, lines, code_raw, parsed = _analyse_python(files, config, cache, progress, overlay)
    set_scripts(scripts_named_like_tests(code_results))  # before any finding gets its scope
    raw += code_raw
    if cache is not None:
        cache.save()

    findings, extra_flags, selection = _project_passes(raw, code_results, parsed, files, project, deps)

    suppress = {rel: res.suppress for rel, (res, _cells) in code_results.items() if res.suppress}
    findings, silenced = _apply_suppressions(findings, suppress, texts, root)
    findings = select_codes(findings, config)
    findings = sort_findings(findings)

    subdirs = _collection(files, code_results)
    if subdirs:
        ladder_, subs = collection_outlook(findings, subdirs, extra_flags)
    else:
        ladder_, subs = ladder(findings, extra_flags), []
    n_files = sum(1 for pf in files if pf.python or pf.notebook or pf.cuda or pf.declaration)  # YAML configs aside
    shown = report_filter(findings, config)  # after the outlook: these narrow the report and the gate only
    unread = _unread(findings, files, excluded if target.is_dir() else [])
    return ScanResult(
        root=str(target), findings=shown, outlook=ladder_.verdict, limiting=sort_findings(ladder_.limiting),
        files_scanned=n_files,
        lines_scanned=lines + sum(t.count("\n") + 1 for t in texts.values()), seconds=time.perf_counter() - started,
        dependencies=deps, subprojects=subs, suppressed=len(silenced), cache_hits=cache.hits if cache else 0, config=config,
        suppressed_findings=sort_findings(select_codes(silenced, config)),
        flags=list(ladder_.flags), edits=list(ladder_.edits),
        incomplete=list(ladder_.incomplete) + [u for u in unread if u not in ladder_.incomplete],
        commands=list(ladder_.commands), optional=optional_parts(findings), secondary=secondary_parts(findings),
        not_verified=not_verified(findings), unread=unread, config_ignored=len(findings) - len(shown), selection=selection,
        hidden_gate=hidden_gate(findings, shown, config),
        excluded=[f"{rel} (excluded by {why})" for rel, why in (excluded if target.is_dir() else [])[:50]],
    )


_UNREAD_DECLARATION = {"INP101", "INP102", "INP103", "INP108", "INP109", "INP110", "INP112", "INP113", "INP116"}
MAX_SHOWN_EXCLUDED = 10  # _UNREAD_DECLARATION: a declaration with one of these could not be read as a whole


def _unread(findings: list[Finding], files: list[ProjectFile], excluded: list[tuple[str, str]]) -> list[str]:
    """Fail closed (issue 34): the main-path dependency declarations that could not be read or parsed (a TOML
    error in ``pyproject.toml`` hid every dependency), and, when the scan read no Python file or notebook at
    all, what the exclusions kept out (``[tool.mpsready] exclude = ["**"]`` or a ``.gitignore`` of ``*`` would
    otherwise leave ``runs_on_mac`` from nothing read), each as ``PATH (excluded by .gitignore)``."""
    from mpsready.scan.outlook import on_main_path
    from mpsready.scan.walker import classify

    out = sorted({f.location.path for f in findings if f.code in _UNREAD_DECLARATION and f.location.path
                  and on_main_path(f) and not f.location.path.endswith((".py", ".ipynb"))
                  and classify(f.location.path)["declaration"]})
    if excluded and not any(pf.python or pf.notebook for pf in files):
        shown = [f"{rel} (excluded by {why})" for rel, why in excluded[:MAX_SHOWN_EXCLUDED]]
        if len(excluded) > MAX_SHOWN_EXCLUDED:
            shown.append(f"and {len(excluded) - MAX_SHOWN_EXCLUDED} more excluded")
        out += shown
    return out


def _project_passes(raw: list[RawFinding], code_results, parsed: dict[str, tuple[str, ast.Module]],
                    files: list[ProjectFile], project: ProjectFiles,
                    deps: list[Dependency]) -> tuple[list[Finding], list[str], dict]:
    """(every finding with the project model's passes applied in order, the extra flags the config surfaces
    need): the declaration and code findings joined across files. ``parsed`` holds the texts and trees the
    analysis kept (:class:`SourceTrees`), so the passes that read call sites parse no file twice."""
    findings: list[Finding] = [_to_finding(r) for r in raw]
    findings += _code_findings(code_results)
    findings += flow.f64_findings(code_results)
    findings += fallbacks.cuda_sources(files, code_results)
    sources = SourceTrees(project.read_text, parsed)  # what the project passes read: each file parsed once
    code_results = config_imports.with_config_imports(code_results, sources, lambda: _config_texts(files, project))
    findings = fallbacks.resolve_fallbacks(findings, code_results, sources)
    findings = flow.wire_pure_paths(findings, code_results)
    findings = fallbacks.drop_own_packages(findings, files)
    findings, extra_flags = apply_surfaces(findings, code_results, _config_texts(files, project),
                                           _uses_hydra(code_results))
    findings = judge_by_torch_pin(cpu_only_dtypes(findings, code_results), deps)
    declared = with_walked_files(declared_entries(project, code_results), files, deps)
    off_path, has_main_path = off_main_path(code_results, declared)
    findings = unused_device_defaults(findings, code_results, sources, off_path, has_main_path, declared.api_names)
    findings = decided_by_callers(findings, code_results, sources, off_path if has_main_path else None)
    findings = mark_reach(findings, code_results, declared)
    findings = kernel_builds.lazily_built(findings, code_results, sources, declared)  # round 9: lazily built kernels
    findings = readme_api_flags(findings, declared)
    findings += readme_usage_findings(declared)
    # last: it reads callers again only for the findings that still limit the outlook
    # issue 32, round 8: one pass over the functions holding limits, "no caller" (round 5) first, then their callers
    findings = caller_reach(findings, code_results, sources, off_options(code_results),
                            off_path if has_main_path else None, set(declared.api_names), declared.api_names)
    findings = behind_off_params(findings, code_results, sources)
    findings, selection = select_first(core_ops(findings, sources, code_results), code_results, sources, declared)  # round 6
    extra_flags += [flag for flag in proposed_flags(findings) if flag not in extra_flags]  # round 7
    findings = with_remedies(findings, registry.fixability().declared_floor(deps))
    return with_console_commands(findings, declared, code_results), extra_flags, selection


MAX_CONFIG_BYTES = 256 * 1024  # config files are small; a large YAML file is data, not a surface


def _config_texts(files: list[ProjectFile], project: ProjectFiles) -> dict[str, str]:
    """Text of the project's YAML files (possible config surfaces); unreadable ones are left out (a declaration
    YAML that cannot be read is already an INP finding)."""
    out = {}
    for pf in files:
        if pf.config and pf.size <= MAX_CONFIG_BYTES:
            try:
                out[pf.relpath] = project.read_text(pf.relpath)
            except Exception:  # SourceError: binary, not UTF-8, vanished
                continue
    return out


def _uses_hydra(results) -> bool:
    return any(imp.module.split(".")[0] in ("hydra", "omegaconf") for res, _c in results.values() for imp in res.imports)


# ------------------------------------------------------------------ declarations
DECLARATION_KINDS: tuple[str, ...] = SOURCE_NAMES  # every declaration source's name, in the order they are tried


def _no_declaration() -> RawFinding:
    """DEP110 at the project root: no declaration source found a dependency (nor a dynamic list, DEP108)."""
    kinds = DECLARATION_KINDS
    return RawFinding(D.NO_DECLARATION, ".", None, f"no dependency declaration found (looked for: {', '.join(kinds)})",
                      evidence={"looked_for": list(kinds)})


def _declarations(files: list[ProjectFile], project: ProjectFiles):
    deps: list[Dependency] = []
    raw: list[RawFinding] = []
    texts: dict[str, str] = {}  # non-Python text files, kept for suppression comments
    for pf in files:
        if not pf.declaration:
            continue
        sources = all_sources()  # the readers are loaded for the first declaration (sources.all_sources)
        try:
            text = project.read_text(pf.relpath)
        except Exception as exc:  # SourceError: unreadable, binary, not UTF-8
            msg = str(exc)
            rule = I.NOT_TEXT if ("binary" in msg or "UTF-8" in msg) else I.UNREADABLE
            raw.append(RawFinding(rule, pf.relpath, None, msg))
            continue
        if not pf.python:
            texts[pf.relpath] = text
        for src in sources:
            if src.matches(pf.relpath):
                res = read_source(src, pf.relpath, text, project)  # total: a reader bug is an INP113 finding
                deps += res.dependencies
                raw += res.findings
    return deps, raw, texts


# ------------------------------------------------------------------ python
def _analyse_one(data: bytes) -> dict[str, Any]:
    return analyze_source(data).to_dict()


def _analyse_here(data: bytes, keep: bool) -> tuple[CodeResult, tuple[str, ast.Module] | None]:
    """The analysis of one source in this process (the result itself: only a pool worker's crosses as a dict),
    with (text, tree) when ``keep`` and the text is what ``ProjectFiles.read_text`` returns for the file (UTF-8),
    so the project passes can use the same tree."""
    if not keep:
        return analyze_source(data), None
    res, tree = analyze_source_tree(data)
    if tree is None:
        return res, None
    if not data.isascii():
        try:
            encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
            text = data.decode("utf-8-sig")
        except (SyntaxError, LookupError, UnicodeDecodeError):
            return res, None
        if encoding not in ("utf-8", "utf-8-sig"):  # the tree was parsed from another decoding
            return res, None
    else:
        text = data.decode("ascii")
    return res, (text, tree)


def _analyse_batch(items: list[tuple[str, bytes]]) -> list[tuple[str, dict[str, Any]]]:
    with gc_paused():
        return [(key, _analyse_one(data)) for key, data in items]


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for a scan.

    Parsing allocates millions of tracked objects, so the collector runs its passes over a growing heap
    again and again (10-20% of an ast.parse of the torch package; 25-30% of a scan of a 4 MB declaration
    file, where each dependency leaves a few findings and dicts behind) although syntax trees, parsed
    declarations and findings hold no reference cycles: reference counting frees each as soon as it is
    dropped. Restored on exit; nesting keeps it paused until the outermost exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _analyse_python(files, config: ScanConfig, cache: ScanCache | MemoCache | None, progress: Progress | None,
                    overlay: Mapping[str, bytes]):
    """({relpath: (CodeResult, cells)} where ``cells`` maps finding index -> notebook cell, total lines, the INP
    findings of files that could not be read, {relpath: (text, tree)} of the sources parsed in this process when
    they are kept for the project passes (see KEEP_TREES_BYTES))."""
    results: dict[str, tuple[CodeResult, list[int | None]]] = {}
    raw: list[RawFinding] = []
    todo: list[tuple[str, bytes]] = []
    keys: dict[str, str] = {}
    lines = 0
    pyfiles = [pf for pf in files if pf.python or pf.notebook]
    total = len(pyfiles)
    done = 0
    for pf in pyfiles:
        mtime_ns = 0 if pf.relpath in overlay else pf.mtime_ns  # an overlay's bytes are not the disk's: no stats
        if cache is not None and pf.python and mtime_ns:
            known = cache.known(pf.relpath, pf.size, pf.mtime_ns)
            hit = _from_cache(cache.get(known[0])) if known is not None else None
            if known is not None and hit is not None:  # unchanged since the last scan: no read, no hash
                key, n = known
                results[pf.relpath] = (hit, [])
                cache.remember(pf.relpath, pf.size, pf.mtime_ns, key, n)
                lines += n
                done += 1
                continue
        try:
            data = overlay[pf.relpath] if pf.relpath in overlay else pf.path.read_bytes()
        except OSError as exc:
            raw.append(RawFinding(I.UNREADABLE, pf.relpath, None, f"cannot read: {exc.strerror or exc}"))
            continue
        n_lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        lines += n_lines
        if pf.notebook:
            if isinstance(cache, MemoCache):  # migrate's rounds: a notebook an earlier round left as it was
                nb_key = "ipynb/" + content_key(data)
                stored: tuple[dict, list[int | None]] | None = cache.get(nb_key)
                if stored is None:
                    res_nb, cells_nb = _analyse_notebook(pf, data, raw)
                    stored = (res_nb.to_dict(), list(cells_nb))
                    cache.put(nb_key, stored)
                results[pf.relpath] = (CodeResult.from_dict(stored[0]), list(stored[1]))  # a copy: passes may amend it
            else:
                results[pf.relpath] = _analyse_notebook(pf, data, raw)
            continue
        if b"\0" in data:
            raw.append(RawFinding(I.NOT_TEXT, pf.relpath, None, "binary file with a .py name; not analysed"))
            continue
        if cache is not None:  # without a cache no key is needed (hashing 50 MB of torch costs 0.1 s)
            key = content_key(data)
            if mtime_ns:
                cache.remember(pf.relpath, pf.size, pf.mtime_ns, key, n_lines)
            cached = _from_cache(cache.get(key))
            if cached is not None:
                results[pf.relpath] = (cached, [])
                done += 1
                continue
            keys[pf.relpath] = key
        todo.append((pf.relpath, data))
    if progress:
        progress(done, total)
    parsed: dict[str, tuple[str, ast.Module]] = {}
    keep = sum(len(data) for _rel, data in todo) <= KEEP_TREES_BYTES
    for rel, res, seen in _run(todo, config.jobs, progress, done, total, keep):  # under scan_path's gc_paused
        results[rel] = (res, [])
        if cache is not None:
            cache.put(keys[rel], res.to_dict())
        if seen is not None:
            parsed[rel] = seen
    return results, lines, raw, parsed


def _from_cache(value: Any) -> CodeResult | None:
    """A cached analysis, or ``None`` (a miss) when the entry is absent or damaged: the cache lives outside
    the project (e.g. ~/.cache) and a bad entry must cost a re-analysis, never the scan."""
    if value is None:
        return None
    try:
        return CodeResult.from_dict(value)
    except Exception:  # any shape error in a hand-edited or truncated entry
        return None


def _run(todo, jobs: int, progress: Progress | None, done: int, total: int, keep: bool):
    if jobs > 1 and len(todo) >= POOL_MIN_FILES:
        size = max(8, len(todo) // (jobs * 8))
        batches = [todo[i:i + size] for i in range(0, len(todo), size)]
        from concurrent.futures import ProcessPoolExecutor  # here: a small scan never loads multiprocessing

        knowledge.preload()  # the workers fork with the shipped tables parsed, instead of each parsing them
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for batch_out in pool.map(_analyse_batch, batches):
                for rel, res in batch_out:
                    done += 1
                    yield rel, CodeResult.from_dict(res), None  # parsed in a worker: the project passes parse what they need again
                if progress:
                    progress(done, total)
        return
    for rel, data in todo:
        done += 1
        yield (rel, *_analyse_here(data, keep))
        if progress and (done % 50 == 0 or done == total):
            progress(done, total)


def _analyse_notebook(pf: ProjectFile, data: bytes, raw: list[RawFinding]):
    from mpsready.scan.code.notebook import analyze_cells
    from mpsready.scan.sources.notebook import NotebookError, code_cells

    merged = CodeResult()
    cells_of: list[int | None] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return merged, cells_of  # INP102 comes from the declaration read (every notebook is one): report it once
    try:
        cells = code_cells(text, skipped=[])  # odd cells are skipped here and reported by the notebook source
    except NotebookError:
        return merged, cells_of  # INP110 comes from the notebook source
    return analyze_cells(cells), cells_of


def _code_findings(results) -> list[Finding]:
    # a project whose code all sits under examples/ or tutorials/ (a collection of tutorials) is judged by it:
    # the examples are its main path
    examples_are_main = not any(scope_of(rel) is Scope.MAIN for rel in results
                                if PurePosixPath(rel).name not in ("setup.py", "conftest.py"))
    out = []
    for rel, (res, cells) in results.items():
        scope = scope_of(rel)
        if examples_are_main and scope is Scope.EXAMPLES:
            scope = Scope.MAIN
        for i, d in enumerate(res.findings):
            ev = dict(d.get("evidence") or {})
            if i < len(cells) and cells[i] is not None:
                ev["cell"] = cells[i]
            out.append(Finding(
                code=d["code"], severity=Severity(d["severity"]), message=d["message"],
                location=Location(path=rel, line=d.get("line"), column=d.get("column"), end_line=d.get("end_line"),
                                  end_column=d.get("end_column")), basis=Basis.PREDICTED,
                fix=d.get("fix"), source=d.get("source"), scope=_forced_scope(d.get("scope"), scope), evidence=ev,
            ))
    return out


def _forced_scope(forced: str | None, path_scope: Scope) -> Scope:
    """A finding that only matters for multi-GPU runs (NCCL) is 'distributed' unless the path already
    puts it in tests, docs, examples or vendored code."""
    if forced and path_scope is Scope.MAIN:
        return Scope(forced)
    return path_scope


def _to_finding(r: RawFinding) -> Finding:
    rule = r.rule
    ev = dict(r.evidence)
    source = ev.pop("source", None) or rule.source
    return Finding(code=rule.code, severity=r.severity or rule.severity, message=r.message,
                   location=Location(path=r.path, line=r.line), basis=Basis.PREDICTED, fix=r.fix or rule.fix,
                   source=source, scope=scope_of(r.path), evidence=ev)


# ------------------------------------------------------------------ suppression and selection
def _apply_suppressions(findings: list[Finding], py_suppress, texts: dict[str, str], root: Path):
    """(kept findings, findings silenced by an inline ``# mpsready: ignore[...]`` comment)."""
    kept, dropped = [], []
    text_lines: dict[str, list[str]] = {}
    line_codes: dict[tuple[str, int], list[str] | None] = {}
    for f in findings:
        path, line = f.location.path, f.location.line
        codes: list[str] | None = None
        if path and line:
            if path in py_suppress:
                cell = f.evidence.get("cell")
                codes = py_suppress[path].get(f"{cell}:{f.evidence.get('cell_line')}" if cell else str(line))
            elif path in texts:
                # split once per file and read each line once, not once per finding: a notebook saved on one
                # line holds thousands of findings on its line 1 (quadratic before)
                if path not in text_lines:
                    text_lines[path] = texts[path].splitlines()
                key = (path, line)
                if key not in line_codes:
                    lines = text_lines[path]
                    line_codes[key] = (parse_suppression(lines[line - 1].split("#", 1)[1])
                                       if 0 < line <= len(lines) and "#" in lines[line - 1] else None)
                codes = line_codes[key]
        if codes and ("*" in codes or f.code in codes or any(f.code.startswith(c) for c in codes if c.isalpha())):
            dropped.append(f)
            continue
        kept.append(f)
    return kept, dropped


def _collection(files: list[ProjectFile], code_results) -> list[str]:
    """The subproject folders of a collection (:func:`_subprojects`, else
    :func:`~mpsready.scan.model.graph.example_collection`), or ``[]`` for one project. A root with entry scripts of its
    own is one project (issue 32, round 4): its main path starts there, and folders that declare their own
    dependencies are its parts (a vendored tool, its own CUDA extension), not subprojects."""
    packages = [str(PurePosixPath(pf.relpath).parent) if "/" in pf.relpath else "" for pf in files
                if pf.declaration and PurePosixPath(pf.relpath).name in _PACKAGE_DECLARATIONS]
    return ([] if root_entries(code_results) else _subprojects(files)) \
        or example_collection(code_results, packages=packages)


def _subprojects(files: list[ProjectFile]) -> list[str]:
    """Top-level directories that declare their own project, when the root declares none."""
    names = {pf.relpath for pf in files if "/" not in pf.relpath}
    if any(n in _DECLARATION_NAMES or (n.startswith("requirements") and n.endswith(".txt")) for n in names):
        return []
    dirs = sorted({pf.relpath.split("/")[0] for pf in files if pf.declaration and pf.relpath.count("/") == 1
                   and PurePosixPath(pf.relpath).name in _DECLARATION_NAMES + ("requirements.txt",)})
    return dirs if len(dirs) >= 2 else []

"""Entry points and the project's import graph: which Python files are on a main entry's path.

Entries are modules that run as programs (a ``__main__`` guard or module-level calls, see
:func:`mpsready.scan.code.analyzer._is_entry`). When the project root holds entry scripts, the *main
path* starts at those named for the main work (``train*.py``, ``main*.py``, ``run*.py``, ``app*.py``,
``cli*.py``; all root entries when none is), at every script the README runs
(:mod:`mpsready.scan.model.entries`) and at every project script a starting root entry names as a string
given to a call (a launcher: ``subprocess.run(["python", "scripts/ppo.py"])``,
``Tuner(script="cleanrl/ppo.py")``), and takes every project module they import, transitively; entry scripts in subdirectories that the main
path does not import (``checkpoints/convert.py``, ``tools/plot.py``) and modules reached only by string
(a Hydra ``_target_``, a registry) are off it, except a module a YAML value names for ``importlib.import_module``
(round 13, :mod:`mpsready.scan.model.config_imports`). Absolute imports resolve from the root, the importing file's
folder outside packages, and the entry script's folder (``sys.path[0]``); one none of them resolves reaches every
candidate module of its top-level folder (round 13, :mod:`mpsready.scan.model.import_paths`). A project without
root-level entries (a library, a collection of scripts) has no single main entry: every file is on the main path.

Apart from that, the ``if __name__ == "__main__":`` block of a package module (its directory holds an
``__init__.py``, or a main-path file imports it: a namespace package's module) that is not itself a main entry is a
demo of the module (``reach = "module_demo"``).
Main entries here: the main path's starting entries (root scripts when it has none), scripts the README runs as
scripts or a root launcher names, ``__main__.py`` files and modules named for the main work (``pkg/train.py``); a
console-script module's block is a demo (its command calls a function), and so is the block of a root script the main
path only imports (issue 32, round 4).
Imports are resolved from files only; nothing is imported.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from mpsready.scan.model.import_paths import based, by_last, candidates, example_program, script_folder

if TYPE_CHECKING:
    from mpsready.scan.model.entries import DeclaredEntries

SKIP_ENTRIES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "manage.py"}
# root scripts that name the main work; when one exists, other root scripts (benchmark.py, generate.py,
# example.py) are secondary entries and off the main path unless the main one imports them
PRIMARY = ("train", "main", "run", "app", "cli", "__main__")


def module_of(relpath: str) -> str:
    parts = list(PurePosixPath(relpath).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def root_entries(results: Mapping[str, Any]) -> list[str]:
    """Root-level entry scripts (setup.py and other tool files aside), sorted."""
    return sorted(rel for rel in results if rel.endswith(".py") and "/" not in rel and rel not in SKIP_ENTRIES
                  and results[rel][0].entry)


def launched(results: Mapping[str, Any], rels: list[str]) -> list[str]:
    """Project scripts that the files ``rels`` name by a string path given to a call, in order."""
    out: dict[str, None] = {}
    for rel in rels:
        for path in results[rel][0].launches:
            norm = posixpath.normpath(path)
            if norm in results and norm != rel and norm.endswith(".py"):
                out.setdefault(norm, None)
    return list(out)


def main_path(results: Mapping[str, Any], readme: list[str] | tuple[str, ...] = (),
              readme_imports: list[str] | tuple[str, ...] = (),
              console: list[str] | tuple[str, ...] = (),
              parents: dict[str, tuple[str, int]] | None = None,
              features: list[str] | tuple[str, ...] = ()) -> tuple[set[str] | None, list[str]]:
    """(the files on the main path, the entries it starts from); ``(None, [])`` when the project has no
    root-level entry script and its README's Python code imports none of its modules (then every file
    counts). ``results`` maps a path to (CodeResult, cells); ``readme`` lists the scripts the project's README
    runs and ``readme_imports`` the modules its Python code blocks import
    (:func:`mpsready.scan.model.entries.declared_entries`): a library's users start there (sam2's
    ``from sam2.build_sam import build_sam2``), so its ``training/`` and benchmark scripts are off the path.
    ``features``: scripts the README runs only after a feature's install (issue 32); when it runs another script
    too, they are no main entries (a root ``train_on_x.py`` run in the README's training section is secondary), and
    when its main sections run root scripts, those alone are the root entries."""
    py = [rel for rel in results if rel.endswith(".py")]
    roots = root_entries(results)
    if features and any(rel in results for rel in readme):
        # a README that sets features apart decides: the root scripts its main sections run are the main entries
        main_ran = [rel for rel in roots if rel in readme]
        roots = main_ran or [rel for rel in roots if rel not in features]
    if not roots:
        ran = [rel for rel in readme if rel in results]
        # issue 32: a package's console scripts are how its users run it (a serving runtime or an evaluation
        # folder that none of them imports is optional, not the main path)
        starts = sorted({*(rel for rel in readme_imports if rel in results), *ran,
                         *(rel for rel in console if rel in results)})
        if not starts:
            return None, []
        for rel in list(starts):  # importing pkg.mod runs pkg/__init__.py first
            parts = PurePosixPath(rel).parts[:-1]
            starts += [init for i in range(1, len(parts) + 1)
                       if (init := "/".join(parts[:i]) + "/__init__.py") in results and init not in starts]
        return _reach(results, py, starts, parents), starts
    primary = [rel for rel in roots if rel.startswith(PRIMARY)]
    # the README adds entries, never demotes one: its first command is often a download or a setup step
    ran = [rel for rel in readme if rel in results and PurePosixPath(rel).name not in SKIP_ENTRIES]
    api = sorted(rel for rel in readme_imports if rel in results and "/" in rel)
    if api and not any("/" not in rel for rel in ran):
        # a library (issue 23): its README shows users importing its package and runs none of its root scripts,
        # so the public API is the main path and root scripts nothing imports (train_*.py demos) are secondary
        starts = sorted({*api, *ran})
        for rel in list(starts):
            parts = PurePosixPath(rel).parts[:-1]
            starts += [init for i in range(1, len(parts) + 1)
                       if (init := "/".join(parts[:i]) + "/__init__.py") in results and init not in starts]
        return _reach(results, py, starts, parents), starts
    ran_primary = [rel for rel in primary if rel in ran]
    ran_console = [rel for rel in ran if rel in console]
    if ran_console and not ran_primary:
        # issue 32: the README runs the project's console command (`acestep --port 7865`) and none of its main-named
        # root scripts: that command is the main work, root scripts the README never runs are secondary parts
        starts = sorted({*ran_console, *(rel for rel in ran if "/" not in rel)})
        for rel in list(starts):
            parts = PurePosixPath(rel).parts[:-1]
            starts += [init for i in range(1, len(parts) + 1)
                       if (init := "/".join(parts[:i]) + "/__init__.py") in results and init not in starts]
        return _reach(results, py, starts, parents), starts
    if ran_primary:
        # issue 32: the README runs some of the main-named root scripts (`python train.py`): those are the main work,
        # another main-named one it never runs (`run_evaluation.py`) is a secondary part
        primary = ran_primary
    starts = sorted({*(primary or roots), *(rel for rel in ran if "/" not in rel)})
    # a script the README runs or a root launcher starts is a main entry of its own
    extra = [rel for rel in [*ran, *launched(results, starts)] if rel not in starts]
    roots = [*starts, *dict.fromkeys(extra)]
    return _reach(results, py, roots, parents), roots



def _reach(results: Mapping[str, Any], py: list[str], roots: list[str],
           parents: dict[str, tuple[str, int]] | None = None) -> set[str]:
    """The files reached from ``roots`` through the project's imports (relative imports resolved, parent
    packages' ``__init__`` included, ``src/`` layouts too). ``parents`` (when given) gets, for each file reached
    through an import, the file and line of the import that first reached it (the call chain of issue 32)."""
    by_module: dict[str, str] = {}
    for rel in py:
        mod = module_of(rel)
        by_module[mod] = rel
        if mod.startswith("src."):
            by_module.setdefault(mod[4:], rel)
    seen: set[str] = set()
    index: dict[str, list[str]] | None = None  # by_last(by_module), built at the first unresolved import
    # (file, the folder its program put first on sys.path): a file reached from two entries in different folders
    # resolves its imports from each (round 13, model/import_paths.py)
    visited: set[tuple[str, str]] = set()
    stack = [(rel, script_folder(rel, results)) for rel in roots]
    while stack:
        rel, program = stack.pop()
        if (rel, program) in visited:
            continue
        visited.add((rel, program))
        seen.add(rel)
        res = results[rel][0]
        pkg = module_of(rel).split(".")
        if not rel.endswith("__init__.py"):
            pkg = pkg[:-1]
        is_pkg = posixpath.join(posixpath.dirname(rel), "__init__.py") in results
        skipped = res.skipped_imports
        for imp in res.imports:
            if skipped and str(imp.line) in skipped:
                continue  # in a branch a Mac running the defaults never enters (issue 32)
            level, module, names = imp.level, imp.module, imp.names
            if level:
                base = pkg[:len(pkg) - (level - 1)] if level - 1 <= len(pkg) else []
                full = ".".join([*base, *([module] if module else [])])
            else:
                full = module
            targets = [full] + [f"{full}.{n}" for n in names if n != "*"]
            if "**" in names:  # modules loaded by name at run time: any of the package's (code/dynamic_imports.py)
                targets += [m for m in by_module if m.startswith(full + ".")]
            if not level and pkg and not is_pkg:
                # a script's own folder is first on sys.path: `from model import X` in inference/generate.py is
                # inference/model.py (issue 32); only outside packages, where no __init__.py makes it relative
                local = ".".join(pkg) + "." + full
                targets += [local] + [f"{local}.{n}" for n in names if n != "*"]
            if not level:  # round 13: the entry script's folder is first on sys.path for every module it imports
                targets += based(program, full, names)
            parts = full.split(".")
            if not level and not any(t in by_module for t in targets) \
                    and not any(".".join(parts[:i]) in by_module for i in range(1, len(parts))):
                index = by_last(by_module) if index is None else index
                targets += candidates(index, full, names, rel)  # round 13: unresolved, so every candidate
            targets += [".".join(parts[:i]) for i in range(1, len(parts))]  # parent packages' __init__ run too
            for t in targets:
                hit = by_module.get(t)
                if hit is not None and (hit, program) not in visited:
                    stack.append((hit, program))
                    if parents is not None and hit not in parents and hit not in roots:
                        parents[hit] = (rel, imp.line)
    return seen


def mark_reach(findings: list, results: Mapping[str, Any], declared: DeclaredEntries | None = None) -> list:
    """Findings in Python files off the main path get ``reach = "off_main_path"`` (with the
    entries), findings in the ``__main__`` block of a package module that is no main entry ``"module_demo"``
    (see the module docstring), notebook findings in a project that also has Python modules
    ``"demo_notebook"``, and findings in a container recipe (a Dockerfile, a container setup script:
    :func:`~mpsready.scan.sources.dockerfile.is_container_recipe`) ``"container"``; none of them limits the
    outlook (:func:`mpsready.scan.model.remedy.limits`). Other findings are returned unchanged. ``declared``
    holds the README's scripts and the console-script modules."""
    from mpsready.findings import Scope, Severity
    from mpsready.scan.model.install_paths import other_platform
    from mpsready.scan.model.optional_parts import part_manifest
    from mpsready.scan.sources.dockerfile import is_container_recipe

    readme = declared.readme if declared is not None else []
    parents: dict[str, tuple[str, int]] = {}
    on_path, roots = main_path(results, readme, declared.imports if declared is not None else (),
                               declared.console if declared is not None else (), parents,
                               declared.features if declared is not None else ())
    mains = main_entries(results, roots, declared)
    # notebooks are demos beside Python modules, unless nothing else runs: no package, no entry script anywhere and
    # no start from the README or a console script (a model file driven by its notebooks, issue 32)
    has_modules = any(rel.endswith(".py") and PurePosixPath(rel).name not in SKIP_ENTRIES for rel in results) and (
        on_path is not None or any(rel.endswith(".py") and (results[rel][0].entry or rel.endswith("__init__.py"))
                                   for rel in results))
    run_by_readme = set(readme)
    out = []
    for f in findings:
        path = f.location.path or ""
        reach = None
        f = _example_in_main(f, path, run_by_readme, on_path is None)
        if f.scope is Scope.MAIN and path in results:
            if path.endswith(".ipynb") and has_modules:
                reach = "demo_notebook"
            elif on_path is not None and path.endswith(".py") and path not in on_path and (
                    "/" in path or results[path][0].entry):
                # a root-level module that no entry imports may be the project's API: it stays on the path;
                # secondary root scripts and unreached files in subdirectories are off it
                reach = "off_main_path"
            elif path.endswith(".py") and path not in mains and f.location.line is not None \
                    and (_package_module(path, results) or path in parents) \
                    and any(g.first <= f.location.line <= g.last for g in results[path][0].main_guards):
                reach = "module_demo"
        elif path and is_container_recipe(path):
            reach = "container"
        elif f.code == "EXT101" and on_path is not None and f.scope is Scope.MAIN and path \
                and _built_off_path(path, results, on_path, declared.cu_sources if declared is not None else {}):
            # issue 32, round 4: every Python file that builds these sources (a JIT `load(sources=[...])`) is off the
            # main path (imported only where a switch off by default selects the kernel): the main path never builds
            reach = "off_main_path"
        elif on_path is not None and f.scope is Scope.MAIN and "/" in path and f.code.startswith("DEP") \
                and _serves_off_path_code(path, results, on_path):
            reach = "off_main_path"
        mac_file = declared.mac_manifests if declared is not None else []
        if reach is None and f.code.startswith("DEP") and mac_file and path not in mac_file \
                and platform_manifest(path) and not f.evidence.get("optional"):
            # issue 32, round 4: the project ships the Mac's own requirement file (requirements-mac.txt,
            # environment_macos.yml): the other platforms' files are not what a Mac installs
            f = f.with_evidence({**f.evidence, "optional": f"a Mac installs {', '.join(mac_file[:2])} instead"})
        if reach is None and f.code.startswith("DEP") and declared is not None \
                and part_manifest(path, declared.installs) and not f.evidence.get("optional"):
            # issue 32: a feature's requirement file that the README's install never uses is optional; round 9:
            # also a part's own requirements.txt below the root when the README installs the package by name
            named = ", ".join((declared.installs or [])[:3]) or "the package by name"
            f = f.with_evidence({**f.evidence, "optional": f"{path} is not installed by the README's install "
                                                           f"({named})"})
        if reach is None and f.code.startswith("DEP") and declared is not None and not f.evidence.get("optional"):
            # issue 32, round 12: a container's environment or a lock file pins another platform's install
            why = other_platform(path, declared.installs, declared.declarations)
            if why is not None:
                f = f.with_evidence({**f.evidence, "optional": why})
        if reach is not None:
            f = f.with_state(reach=reach, entries=roots[:5] if reach == "off_main_path" else None)
        elif f.scope is Scope.MAIN and path.endswith(".py") and f.severity.rank >= Severity.DEGRADES.rank \
                and (f.severity is Severity.BLOCKER or f.code == "API104"):
            f = f.with_evidence({**f.evidence, "main_path": why_on_path(path, f.evidence, on_path, roots, parents)})
        out.append(f)
    return out


def _example_in_main(f: Any, path: str, run_by_readme: set[str], no_entry: bool) -> Any:
    """A finding of an example file in main scope when the README runs the file (GroundingDINO's
    ``demo/inference_on_a_image.py``: the project's main use, whatever its folder's name says), or, round 13, when the
    project has no entry at all and the file is an example program (:func:`import_paths.example_program`: then the
    examples are how the project runs, and their limits count); else ``f`` unchanged."""
    from mpsready.findings import Scope

    if f.scope is not Scope.EXAMPLES:
        return f
    if path in run_by_readme:
        return replace(f, scope=Scope.MAIN).with_evidence({**f.evidence, "scope_from": "readme"})
    if no_entry and example_program(path):
        return replace(f, scope=Scope.MAIN).with_evidence({**f.evidence, "scope_from": "no entry: an example program"})
    return f


def off_main_path(results: Mapping[str, Any],
                  declared: DeclaredEntries | None) -> tuple[Callable[[str], bool], bool]:
    """Whether a file is off the main path as :func:`mark_reach` judges it (issue 32, round 4): tests, docs and
    examples (by scope, unless the README runs the file), a Python file no main entry reaches, and a notebook beside
    the project's Python modules (a demo). The call-site passes read only the main path's calls. Second: whether
    the project has a main path at all (entries it starts from; else every file counts)."""
    from mpsready.findings import Scope
    from mpsready.scan.scope import scope_of

    readme = declared.readme if declared is not None else []
    on_path, _roots = main_path(results, readme, declared.imports if declared is not None else (),
                                declared.console if declared is not None else (), None,
                                declared.features if declared is not None else ())
    has_modules = any(rel.endswith(".py") and PurePosixPath(rel).name not in SKIP_ENTRIES for rel in results) and (
        on_path is not None or any(rel.endswith(".py") and (results[rel][0].entry or rel.endswith("__init__.py"))
                                   for rel in results))
    run_by_readme = set(readme)

    def off(rel: str) -> bool:
        if scope_of(rel) is not Scope.MAIN and rel not in run_by_readme:
            return True
        if rel.endswith(".ipynb"):
            return has_modules
        return on_path is not None and rel.endswith(".py") and rel not in on_path and (
            "/" in rel or bool(results[rel][0].entry))

    return off, on_path is not None


_MAC_WORDS = frozenset(("mac", "macos", "osx", "darwin", "apple", "m1", "mps", "arm64", "silicon"))


def mac_manifest(path: str) -> bool:
    """A requirement or environment file for the Mac by its name (issue 32, round 4): a word of its stem (split at
    ``-``, ``_``, ``.``) names macOS or Apple silicon: ``requirements-mac.txt``, ``requirements_macOS.txt``,
    ``conda_environment_macos.yaml``, ``environment-apple-silicon.yml``."""
    name = PurePosixPath(path).name.lower()
    stem = name.rsplit(".", 1)[0]
    words = set(stem.replace("-", "_").replace(".", "_").split("_"))
    return platform_manifest(path) and bool(words & _MAC_WORDS)


def platform_manifest(path: str) -> bool:
    """A requirement or environment file (``requirements*.txt``, ``environment*.yml``, a conda file): what a
    platform installs; never ``pyproject.toml`` or ``setup.py``, which the package itself declares."""
    name = PurePosixPath(path).name.lower()
    if name.endswith(".txt"):
        return "requirements" in name or "requirements" in [q.lower() for q in PurePosixPath(path).parts[:-1]]
    return name.endswith((".yml", ".yaml")) and ("env" in name or "conda" in name)


def _built_off_path(cu_path: str, results: Mapping[str, Any], on_path: set[str],
                    cu_sources: Mapping[str, list[str]]) -> bool:
    """Whether the CUDA sources of ``cu_path``'s folder (``cu_sources``: folder -> its ``.cu`` file names) are built
    only by Python files off the main path: at least one file names them (``res.cu_refs``), none is a ``setup.py``
    (an install builds those whatever the main path imports), and none is on the main path."""
    folder = posixpath.dirname(cu_path)
    names = set(cu_sources.get(folder, ()))
    builders = {rel for rel, (res, _cells) in results.items() for ref in res.cu_refs if ref.name in names}
    if any(d != folder and names & set(files) for d, files in cu_sources.items()):
        # issue 32, round 9: another folder holds sources of the same name (a vendored copy of one kernel): a
        # builder outside this folder and its parents builds that copy, not this one
        builders = {rel for rel in builders if not posixpath.dirname(rel)
                    or folder == posixpath.dirname(rel) or folder.startswith(posixpath.dirname(rel) + "/")}
    if not builders or any(PurePosixPath(rel).name == "setup.py" for rel in builders):
        return False
    return not any(rel in on_path for rel in builders)


def feature_manifest(path: str) -> bool:
    """A requirement or environment file for one feature or variant: ``requirements/<x>.txt``,
    ``requirements-<x>.txt``, ``<x>_requirements.txt``, ``environment-<x>.yml``; never the plain
    ``requirements.txt``, ``environment.yml``, ``pyproject.toml`` or ``setup.py``."""
    p = PurePosixPath(path)
    name = p.name.lower()
    if name in ("requirements.txt", "environment.yml", "environment.yaml"):
        return False
    if name.endswith(".txt") and ("requirements" in name or "requirements" in [q.lower() for q in p.parts[:-1]]):
        return True
    return name.startswith(("environment", "env")) and name.endswith((".yml", ".yaml"))


def why_line(evidence: Mapping[str, Any]) -> str | None:
    """The one terminal line of :func:`why_on_path`'s answer: ``train.py:3 -> models/net.py; on a Mac:
    torch.cuda.is_available() is False``."""
    why = evidence.get("main_path")
    if not why:
        return None
    start = "every file counts (no entry script)" if why.get("entry") is None else " -> ".join(why["chain"])
    facts = why.get("facts") or []
    line = f"main path: {start}" + (f"; on a Mac: {'; '.join(facts)}" if facts else "")
    if why.get("calls"):  # round 10: the calls from code that runs to the finding's definition
        line += f"; calls: {' -> '.join(why['calls'])}"
    for step in evidence.get("undecided") or ():  # issue 32, item 6: the value that decides, and what each gives
        line += (f"; undecided: {step['test']} (line {step['line']}) depends on {', '.join(step['decided_by'])}: "
                 f"if true it {step['if_true']}, if false it {step['if_false']}")
    return line


def why_on_path(path: str, evidence: Mapping[str, Any], on_path: set[str] | None, roots: list[str],
                parents: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    """Why a finding in ``path`` runs on the main path (issue 32): the entry it is reached from, the chain of
    imports (``train.py:3 -> models/net.py``), and the facts of a Mac under which its branch runs (the evaluation's
    ``mac_enters``, :mod:`mpsready.scan.code.macfacts`); a project without entries counts every file."""
    chain: list[str] = []
    entry: str | None = None
    if on_path is None:
        entry = None
    else:
        node, seen = path, set()
        while node in parents and node not in seen:
            seen.add(node)
            parent, line = parents[node]
            chain.append(f"{parent}:{line}")
            node = parent
        entry = node
        chain.reverse()
    facts = [fact for step in evidence.get("mac_enters") or () for fact in step.get("facts", ())]
    return {"entry": entry, "chain": [*chain, path], "facts": list(dict.fromkeys(facts))}


def _serves_off_path_code(manifest: str, results: Mapping[str, Any], on_path: set[str]) -> bool:
    """Whether a declaration file in a subdirectory belongs to code the main path never runs: its directory
    holds Python files and none of them is on the main path (Depth-Anything's ``metric_depth/environment.yml``,
    a vendored hub model's ``requirements.txt``). A ``requirements/train.txt`` beside no Python file stays."""
    folder = manifest.rsplit("/", 1)[0] + "/"
    code = [rel for rel in results if rel.startswith(folder) and rel.endswith(".py")]
    return bool(code) and not any(rel in on_path for rel in code)


def main_entries(results: Mapping[str, Any], roots: list[str], declared: DeclaredEntries | None) -> set[str]:
    """Files whose ``__main__`` block is a main entry rather than a demo: the main path's starting entries (root
    scripts when it has none), scripts the README runs or a root launcher names, ``__main__.py`` files and modules named
    for the main work (``pkg/train.py``). A console-script module is none of them by being one: its console
    script calls a function of it, not its ``__main__`` block (issue 32, round 4)."""
    console_only: set[str] = set()
    if declared is not None:
        # issue 32, round 4: a console script (`pkg.mod:main`) calls its function, never the module's `__main__`
        # block, so a console-script module's block is a demo unless the README runs the module as a script too
        console_only = set(declared.console) - set(declared.readme if declared.as_script is None
                                                   else declared.as_script)
    # issue 32, round 4: a root script the main path only imports (build-nanogpt's hellaswag.py, imported by
    # train_gpt2.py for its helpers) runs its `__main__` block only when run by hand: a demo of the module, not the
    # main command, when the main path starts elsewhere (main-named root scripts, the README's commands)
    out = {*(rel for rel in roots if rel not in console_only), *launched(results, root_entries(results))}
    if not roots:
        out |= set(root_entries(results))
    if declared is not None:
        out |= set(declared.readme if declared.as_script is None else declared.as_script)
    named = {rel for rel in results if PurePosixPath(rel).name.startswith(PRIMARY)}
    out |= named - _imported_library_modules(results, roots, named - out)
    return out


def _imported_library_modules(results: Mapping[str, Any], roots: list[str], named: set[str]) -> set[str]:
    """The package modules among ``named`` (files named for the main work that no entry, README command or launcher
    runs) that the main path imports from another file: importing a module never runs its ``if __name__ ==
    "__main__":`` block, and when the path starts elsewhere nothing runs it as a script (issue 32: a package's
    ``rfdetr/main.py``, imported by the API for its ``Model`` class, ran its exporter demo as if it were the main
    command). ``__main__.py`` stays (``python -m pkg`` runs it); so does a module no other file imports."""
    named = {rel for rel in named if PurePosixPath(rel).name != "__main__.py" and _package_module(rel, results)}
    if not named or not roots:
        return set()
    parents: dict[str, tuple[str, int]] = {}
    _reach(results, [rel for rel in results if rel.endswith(".py")], roots, parents)
    return {rel for rel in named if rel in parents}


def _package_module(rel: str, results: Mapping[str, Any]) -> bool:
    """A module of a package (its directory holds an ``__init__.py``): importable, so a ``__main__`` block in
    it is run by hand, unlike a script's in a directory of scripts."""
    parent = PurePosixPath(rel).parent
    return "/" in rel and str(parent / "__init__.py") in results


def _prefixes(module: str, floor: str) -> set[str]:
    """``module`` and its parent packages down to ``floor`` (``a.b.c`` over ``a.b`` -> {a.b.c, a.b})."""
    out, parts = set(), module.split(".")
    while parts and ".".join(parts).startswith(floor):
        out.add(".".join(parts))
        parts.pop()
    return out


def example_collection(results: Mapping[str, Any], minimum: int = 3, packages: Iterable[str] = ()) -> list[str]:
    """Directories that each hold their own entry script and import nothing from one another
    (``implementations/aae/aae.py``, ``tutorials/01-basics/linear_regression/main.py``, ...): a collection of
    independent examples, judged one by one. Only for a project with no root-level entry script and at least
    ``minimum`` such directories; ``[]`` otherwise.

    ``packages`` are the folders that hold an installable package declaration (``setup.py``, ``pyproject.toml``,
    ``setup.cfg``; ``""`` for the root). A project that installs itself (a declaration at the root, or one in a
    folder above a candidate directory: ``umamba/setup.py`` over ``umamba/nnunetv2``) is one project whose other
    folders (configs, evaluation, assets) serve it, not a collection of independent examples (issue 32: a
    CUDA-only core in the installed package was excused by sibling config folders that hold no model). At least
    ``minimum`` of the directories must import ``torch``: an example runs PyTorch itself."""
    py = [rel for rel in results if rel.endswith(".py")]
    if any("/" not in rel and rel not in SKIP_ENTRIES and results[rel][0].entry for rel in py):
        return []
    dirs = sorted({str(PurePosixPath(rel).parent) for rel in py if "/" in rel and results[rel][0].entry
                   and PurePosixPath(rel).name not in SKIP_ENTRIES})
    dirs = [d for d in dirs if not any(d != o and d.startswith(o + "/") for o in dirs)]  # outermost only
    if len(dirs) < minimum:
        return []
    pkgs = set(packages)
    if "" in pkgs or any(d.startswith(p + "/") for d in dirs for p in pkgs):
        return []
    # an example runs PyTorch itself (a file imports torch): folders of data preparation, launch or metric scripts
    # that never do serve another folder's model and are no examples
    if sum(any(rel.startswith(d + "/") and any(i.module == "torch" or i.module.startswith("torch.")
                                               for i in results[rel][0].imports) for rel in py) for d in dirs) < minimum:
        return []
    modules = {d: {module_of(rel).rsplit(".", 1)[-1] for rel in py if rel.startswith(d + "/")} for d in dirs}
    # dotted module names of each directory's files and packages, for imports written from the root
    # (`from proj.train.train import main` in proj/run/train/ links it to proj/train/: dinov2's launchers)
    dotted = {d: {m for rel in py if rel.startswith(d + "/") for m in _prefixes(module_of(rel), module_of(d))}
              for d in dirs}
    for d in dirs:
        others = set().union(*(modules[o] for o in dirs if o != d)) - modules[d]
        others_dotted = set().union(*(dotted[o] for o in dirs if o != d))
        for rel in py:
            if rel.startswith(d + "/"):
                absolute = [imp for imp in results[rel][0].imports if not imp.level]
                imported = {imp.module.split(".")[0] for imp in absolute}
                full = {imp.module for imp in absolute} | {f"{imp.module}.{n}" for imp in absolute for n in imp.names}
                if imported & others or full & others_dotted:
                    return []  # the directories use one another: one project, not a collection
    return dirs

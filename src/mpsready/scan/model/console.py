"""What the outlook's command line and the Mac's install read from the walked project (issue 32, round 4): the
console command that runs an option's function, the Mac's own requirement files and each folder's CUDA sources."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mpsready.scan.model.entries import DeclaredEntries


def with_walked_files(declared: DeclaredEntries, files: Iterable[Any], deps: Iterable[Any] = ()) -> DeclaredEntries:
    """``declared`` with what the walked files say (issue 32, round 4): the Mac's own requirement files
    (:func:`~mpsready.scan.model.graph.mac_manifest`), each folder's ``.cu`` file names, and the files that declared
    at least one dependency read (``deps``; round 12)."""
    from mpsready.scan.model.graph import mac_manifest

    files = list(files)
    declared.mac_manifests = sorted(pf.relpath for pf in files if pf.declaration and mac_manifest(pf.relpath))
    declared.declarations = sorted({d.path for d in deps})
    declared.config_files = sorted(pf.relpath for pf in files if pf.config)
    for pf in files:
        if pf.cuda and not pf.relpath.endswith(".cuh"):
            folder, _, name = pf.relpath.rpartition("/")
            declared.cu_sources.setdefault(folder, []).append(name)
    return declared


def with_console_commands(findings: list[Any], declared: DeclaredEntries, results: Mapping[str, Any]) -> list[Any]:
    """Flag findings in a console-script module get ``evidence.console_script``: the outlook's command line is that
    command (``nnUNetv2_train -device mps``), not ``python module.py`` (issue 32, round 4)."""
    if not declared.console_commands:
        return findings
    out = []
    for f in findings:
        if f.remedy and f.remedy.get("kind") == "flag" and (f.location.path or "") in declared.console_commands:
            name = console_command_of(f, declared, results)
            if name:
                f = f.with_evidence({**f.evidence, "console_script": name})
        out.append(f)
    return out


def console_command_of(f: Any, declared: DeclaredEntries, results: Mapping[str, Any]) -> str | None:
    """The console command that runs the option a flag finding is about (issue 32, round 4): its file is a
    console-script module the README does not run as a script, and the command's function holds the option's line
    (the first command of the module when no function does). ``None`` otherwise."""
    path = f.location.path or ""
    names = declared.console_commands.get(path)
    if not names or path in (declared.as_script or ()):
        return None
    res = results.get(path)
    spans = res[0].def_spans if res is not None else []
    line = f.location.line or 0
    holder = next((s.name for s in spans if s.first <= line <= s.last), None)
    return next((name for name, func in names if func == holder), names[0][0])

"""The static outlook: the cost of getting the project's main path onto MPS, as a ladder.

- ``runs_on_mac``: nothing to change, or only command-line flags / config values (:attr:`Outlook.flags`
  says exactly which, e.g. ``--device mps``, ``--device=mps --compile=False``, ``trainer=mps``);
- ``mac_for_dev``: local edits are needed (:attr:`Outlook.edits`, each with file, line and whether
  ``mpsready migrate`` makes it), an in-repo pure-PyTorch path must be wired in, or a declared CUDA-first
  dependency must be left out, swapped or its pin raised;
- ``stay_on_cuda``: a main-path finding needs a CUDA-only kernel or library with no usable path in the
  repository or on PyPI (remedy ``none``).

Only findings that :func:`~mpsready.scan.model.remedy.limits` the main path count: tests, docs,
examples, vendored and distributed-only code, demo notebooks, files off the entries' import path, container
recipes (Dockerfiles), and code behind a flag that is off by default, are reported with their scope or reach
and never limit it. Scale is not judged here (the record and time outlook do that).

A collection of subprojects gets an outlook per subproject; its headline is ``stay_on_cuda`` only when
every subproject is, so one CUDA-only member never condemns the rest. Python files and notebooks on the main
path that could not be parsed (INP105/INP106) or read make the outlook *incomplete* (:attr:`Outlook.incomplete`
names them): the verdict covers only what was read and says so, it never silently gets better. An unread file
off the main path (tests, docs, examples, a demo notebook, a script no entry imports) is still reported, but
cannot change the main path's verdict, so it leaves the outlook complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from mpsready.findings import Finding, Scope, Severity, Verdict
from mpsready.scan.model.remedy import EDIT, FLAG, NONE, OFF_PATH_REACH, SWAP, WIRE, limits, remedy_of

_UNREAD = {"INP101", "INP102", "INP103", "INP105", "INP106", "INP117"}


@dataclass(frozen=True)
class Edit:
    """One change the Mac needs: ``kind`` is ``edit`` (code), ``wire`` (use an in-repo pure-PyTorch path) or
    ``swap`` (a dependency); ``migrate`` says whether ``mpsready migrate`` makes it."""

    path: str | None
    line: int | None
    code: str
    kind: str
    what: str
    migrate: bool = False

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "code": self.code, "kind": self.kind, "what": self.what,
                "migrate": self.migrate}


@dataclass(frozen=True)
class Outlook:
    verdict: Verdict
    limiting: tuple[Finding, ...] = ()
    flags: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = ()
    incomplete: tuple[str, ...] = ()
    # the exact command lines (issue 32): `python train.py --device mps` per script whose own options are the flags
    commands: tuple[str, ...] = ()


@dataclass(frozen=True)
class Subproject:
    path: str
    outlook: Verdict
    limiting: tuple[Finding, ...]
    flags: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = field(default=())


def _edit(f: Finding, remedy: dict) -> Edit:
    kind = remedy["kind"]
    if kind == WIRE:
        what = f"use the pure-PyTorch path at {remedy['path']} when the tensor is not on CUDA"
    elif kind == SWAP:
        what = remedy.get("what") or "swap the dependency on the Mac"
    else:
        what = remedy.get("what") or f.fix or f.message
    return Edit(f.location.path, f.location.line, f.code, kind, what, bool(remedy.get("migrate")))


def ladder(findings: Iterable[Finding], extra_flags: Iterable[str] = ()) -> Outlook:
    """The outlook of one project (or subproject) from its findings; ``extra_flags`` are config-only changes
    found elsewhere (a Hydra group's Mac option) that the Mac run needs whatever the findings say."""
    findings = list(findings)
    flags: list[str] = []
    edits: list[Edit] = []
    hard: list[Finding] = []
    costly: list[Finding] = []
    by_script: dict[str, list[str]] = {}  # `python script.py` or a console command -> the flags of its own options
    for f in findings:
        if not limits(f) or (f.evidence or {}).get("optional"):
            continue
        remedy = remedy_of(f)
        kind = remedy["kind"]
        if kind == FLAG:
            if remedy["flag"] not in flags:
                flags.append(remedy["flag"])
            path = f.location.path or ""
            if path.endswith(".py") and remedy["flag"].startswith("-"):
                # a console-script module's option is given to its command (issue 32, round 4)
                run = (f.evidence or {}).get("console_script") or f"python {path}"
                by_script.setdefault(run, [])
                if remedy["flag"] not in by_script[run]:
                    by_script[run].append(remedy["flag"])
        elif kind == NONE:
            hard.append(f)
        elif kind in (EDIT, WIRE, SWAP):
            costly.append(f)
            edit = _edit(f, remedy)
            if not edits or (edits[-1].path, edits[-1].line, edits[-1].code) != (edit.path, edit.line, edit.code):
                edits.append(edit)  # `a.cuda(), b.cuda()` on one line is one edit
    for flag in extra_flags:
        if flag not in flags:
            flags.append(flag)
    incomplete = tuple(sorted({f.location.path for f in findings if f.code in _UNREAD and on_main_path(f)
                               and f.location.path is not None and f.location.path.endswith((".py", ".ipynb"))}))
    if hard:
        verdict, limiting = Verdict.STAY_ON_CUDA, hard
    elif costly:
        verdict, limiting = Verdict.MAC_FOR_DEV, costly
    else:
        verdict, limiting = Verdict.RUNS_ON_MAC, []
    # a flag found in a script (its argparse/configurator option) is given on that script's command line; the
    # other flags of the run (config values, a library call's keyword) are printed beside it as they are
    commands = tuple(f"{run} {' '.join(opts)}" for run, opts in by_script.items())
    return Outlook(verdict, tuple(limiting), tuple(flags), tuple(edits), incomplete, commands)


@dataclass(frozen=True)
class SecondaryPart:
    """A part of the project off the main path (issue 23): a folder (``evaluation``, ``tests``) or a root script no
    entry runs (``train_demo.py``), with the outlook its own findings would give it if it were run on a Mac. It is
    printed on its own line (``evaluation: mac_for_dev, 3 edits``) and never lowers the main outlook."""

    part: str
    outlook: Verdict
    limiting: tuple[Finding, ...]
    flags: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = ()

    def line(self) -> str:
        n = len(self.edits)
        cost = f", {n} edit{'s' if n != 1 else ''}" if n else ""
        flags = f", flags {' '.join(self.flags)}" if self.flags else ""
        return f"{self.part}: {self.outlook.value}{cost}{flags}"


def optional_parts(findings: Iterable[Finding]) -> list[dict]:
    """The findings an optional part would need on a Mac (issue 32, item 3): a feature's requirement file the
    README's install does not use, an import that runs only where its package is installed; each would limit the
    main path if it were required. Listed on their own line, never in the headline."""
    out = []
    for f in findings:
        why = (f.evidence or {}).get("optional")
        if not why or f.scope is not Scope.MAIN or f.reach in OFF_PATH_REACH or f.code.startswith("INP"):
            continue
        if f.severity is Severity.BLOCKER or (f.code == "DEP107" and why.startswith("imported only when")):
            out.append({"path": f.location.path, "line": f.location.line, "code": f.code, "why": why})
    return out


def not_verified(findings: Iterable[Finding]) -> list[dict]:
    """The limits whose reach by calls the scan could not settle (issue 32, round 10,
    :mod:`mpsready.scan.model.call_reach`): a definition a decorator may register, a method a framework may call by
    name. Each would limit the main path if it runs there; listed on their own line, never in the headline."""
    return [{"path": f.location.path, "line": f.location.line, "code": f.code, "why": f.evidence["not_verified"]}
            for f in findings if (f.evidence or {}).get("not_verified") and f.severity is Severity.BLOCKER]


# scopes whose code is a part of its own; vendored code and container recipes are someone else's, never a part
_PART_SCOPES = (Scope.TESTS, Scope.DOCS, Scope.EXAMPLES, Scope.DISTRIBUTED)
_PART_REACH = ("off_main_path", "module_demo", "demo_notebook")


def secondary_parts(findings: Iterable[Finding]) -> list[SecondaryPart]:
    """The secondary parts whose findings would cost something on a Mac, by part name: each finding off the main
    path (its scope in :data:`_PART_SCOPES`, or its reach off the main path, a module demo or a demo notebook) is
    judged by :func:`ladder` as if its part were the main path; parts that would run as they are are left out."""
    from mpsready.scan.model.remedy import remedy_of

    groups: dict[str, list[Finding]] = {}
    for f in findings:
        ev = f.evidence or {}
        path = f.location.path or ""
        off = f.reach in _PART_REACH or (f.scope in _PART_SCOPES and not f.behind_flag)
        if not path or not off or f.code.startswith("INP") or ev.get("optional"):
            continue
        part = path.split("/", 1)[0] if "/" in path else path
        as_main = replace(f, scope=Scope.MAIN).with_state(reach=None, entries=None)
        if limits(as_main):
            as_main = as_main.with_state(remedy=remedy_of(as_main))
        groups.setdefault(part, []).append(as_main)
    out = []
    for part in sorted(groups):
        o = ladder(groups[part])
        if o.verdict is not Verdict.RUNS_ON_MAC or o.flags:
            out.append(SecondaryPart(part, o.verdict, o.limiting, o.flags, o.edits))
    return out


def on_main_path(f: Finding) -> bool:
    """Whether ``f``'s file belongs to the main path: scope ``main`` and no off-path reach (a demo notebook, a
    script no entry imports, a container recipe). Only such files make the outlook incomplete when unread."""
    return bool(f.location.path) and f.scope is Scope.MAIN and f.reach not in OFF_PATH_REACH


def verdict_of(findings: Iterable[Finding]) -> tuple[Verdict, list[Finding]]:
    """(verdict, limiting findings) of :func:`ladder`."""
    o = ladder(findings)
    return o.verdict, list(o.limiting)


def is_hard(f: Finding) -> bool:
    """A main-path finding with no usable path on the Mac (remedy ``none``)."""
    return limits(f) and remedy_of(f)["kind"] == NONE and not (f.evidence or {}).get("optional")


def collection_outlook(findings: list[Finding], subproject_dirs: list[str],
                       extra_flags: Iterable[str] = ()) -> tuple[Outlook, list[Subproject]]:
    """Outlook of a collection: per-subproject outlooks, and the collection's headline (see the module doc)."""
    subs: list[Subproject] = []
    for d in subproject_dirs:
        inside = [f for f in findings if (f.location.path or "").startswith(d + "/")]
        o = ladder(inside)
        subs.append(Subproject(d, o.verdict, o.limiting, o.flags, o.edits))
    overall = ladder(findings, extra_flags)
    if overall.verdict is Verdict.STAY_ON_CUDA and subs and not all(s.outlook is Verdict.STAY_ON_CUDA for s in subs):
        costly = tuple(f for f in findings if limits(f) and f.severity is Severity.BLOCKER)
        overall = Outlook(Verdict.MAC_FOR_DEV, costly, overall.flags, overall.edits, overall.incomplete)
    return overall, subs

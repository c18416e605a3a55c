"""The selection-first verdict (issue 32, round 6): the headline is decided from the device selection of the project's
entries first, and only what lies on the path of an entry that puts the Mac on MPS limits it.

**Question 1: where does each entry's work go on a Mac?** The project's entries are its programs: the main path's
starting entries (:func:`mpsready.scan.model.graph.main_path`: the README's scripts, the main-named root scripts, console
modules, launched scripts) and every other main-scope script that runs as a program (``if __name__ == "__main__":`` or
module-level calls). Each entry's *reach* is the set of project files its imports reach. An entry **picks MPS** when
a file of its reach holds a device choice that gives MPS on a Mac (:func:`chooses_mps`): ``torch.backends.mps.
is_available()``, ``torch.accelerator``, an ``"mps"`` device value (``torch.device("mps")``, ``device = "mps"``, a
device option whose choices or default name it; a comparison with ``"mps"`` alone is no choice), Lightning's
``accelerator="gpu"``/``"auto"``/``"mps"`` (``data/device_choosers.yaml``), accelerate's ``Accelerator()`` or
Hugging Face ``TrainingArguments``; or when a finding of its reach is fixed by a device flag (``--device mps``). The
selection nearest the entry decides: an entry whose own file names a CUDA device (API101/API103) or a CUDA-or-CPU
choice (API104) and chooses no MPS itself picks no MPS, whatever the modules it imports choose. Or,
for an entry whose reach holds no limiting device finding (no ``.cuda()``, hard-coded ``"cuda"`` or CUDA-or-CPU
choice), when the project's configuration names the device and the scan names its override (``training.device=mps``):
the entry's device is that config value.

**Question 2: what limits the entries that pick MPS?** When most *main* entries (the starting entries of the main
path; without one, the main-named scripts, README scripts and console modules) pick MPS, MPS is the project's
selection and the Mac path is the reach of the entries that pick it (with one MPS entry beside one CUDA entry the
project's selection is undecided, and every limit counts as before):

- a finding in a Python file that some entries reach but none that picks MPS (a Gradio demo or a real-robot evaluation
  script hard-coded to ``cuda``, a quantisation tool) belongs to those other entries' own programs: ``reach:
  off_main_path`` with ``evidence.other_entries`` (``reached only from eval_robot.py, whose device selection picks no
  MPS``); it is listed as a secondary part, never in the headline;
- a CUDA-or-CPU choice (API104) in a module that is no entry, reached only by entries that pick MPS, is a secondary
  selection: the part it feeds runs on the Mac's CPU, slower but correctly, while the main selection puts the work on
  MPS (lag-llama's predictor device beside its Lightning ``accelerator="gpu"``). It becomes ``info`` with
  ``evidence.secondary_cpu`` and is listed, never in the headline. The entry files' own CUDA-or-CPU choices keep
  limiting: there the choice *is* the entry's selection.

Everything else (dependencies, kernels, findings in files reached by an entry that picks MPS, files no entry reaches)
is judged as before. When most main entries pick no MPS, nothing changes and the summary says which limit answers
question 1 (``cpu``: a CUDA-or-CPU choice; ``cuda``: a hard-coded CUDA device; ``entries`` lists the main entries
that do pick MPS).

**Limits.** Reach is by imports, not calls (a file an entry imports but whose functions it never calls counts); a
device choice anywhere in an entry's reach counts as that entry's selection (a choice used for another purpose counts
too); modules loaded by string are reached only as :mod:`~mpsready.scan.model.graph` resolves them. Projects of more
than :data:`MAX_FILES` Python files or with more than :data:`MAX_ENTRIES` entries are left as they are (the torch package).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any, Mapping

from mpsready.findings import Finding, Scope, Severity
from mpsready.scan.model.graph import PRIMARY, SKIP_ENTRIES, _reach, main_path
from mpsready.scan.model.remedy import OFF_PATH_REACH, limits
from mpsready.scan.model.call_reach import calls_pass
from mpsready.scan.model.own_program import own_program_pass
from mpsready.scan.model.subcommands import split_dispatchers
from mpsready.scan.model.surfaces import flag_text, is_device_option
from mpsready.scan.scope import scope_of

MAX_FILES = 400  # Python files of a project this pass looks at
MAX_ENTRIES = 64  # entries whose reach is computed
DEVICE_CODES = ("API101", "API103", "API104")  # a device the code itself names: CUDA, or CUDA-or-CPU
_LIGHTNING = ("gpu", "auto", "mps")  # Lightning accelerator values that give MPS on a Mac (data/device_choosers.yaml)
_CHOOSERS = ("Accelerator", "PartialState", "TrainingArguments", "Seq2SeqTrainingArguments")
_CHOOSER_PACKAGES = ("accelerate", "transformers")
_UI_PACKAGES = ("gradio", "streamlit")  # web UI demos (round 7)


def select_first(findings: list[Finding], results: Mapping[str, Any], sources: Any,
                 declared: Any) -> tuple[list[Finding], dict[str, Any]]:
    """(``findings`` with questions 1 and 2 of the module doc applied, the selection summary for the outlook).
    First, round 9: what only a non-main module's own program runs is off the main path (model/own_program.py)."""
    findings = own_program_pass(findings, results, sources, declared)
    findings = calls_pass(findings, results, sources, declared)  # round 10: reach by calls, not by imports
    py = [rel for rel in results if rel.endswith(".py")]
    if len(py) > MAX_FILES:
        return findings, {}
    on_path, roots = main_path(results, declared.readme, declared.imports, declared.console, None, declared.features)
    programs = [rel for rel in py if results[rel][0].entry and scope_of(rel) is Scope.MAIN
                and PurePosixPath(rel).name not in SKIP_ENTRIES]
    if on_path is not None:
        mains = [rel for rel in roots if rel in results]
    else:
        mains = [rel for rel in programs if PurePosixPath(rel).name.startswith(PRIMARY)]
        mains += [rel for rel in [*declared.readme, *declared.console] if rel in results and rel not in mains]
    # round 9: a command-line group's sub-commands are entries of their own (model/subcommands.py)
    mains, programs, split = split_dispatchers(mains, programs, results, sources, declared.console_commands)
    entries = list(dict.fromkeys([*mains, *programs]))
    findings = [_sub_command(f, split) for f in findings]
    if not mains or len(entries) > MAX_ENTRIES:
        return findings, {}
    reach = {e: _reach(results, py, [e]) for e in entries}
    findings = [_unset_flag(f, entries, reach, results) for f in findings]
    offers: dict[str, str | None] = {}  # file -> where it chooses MPS (cached)
    config_flag = next((f.evidence["flag"] for f in findings if (f.evidence or {}).get("flag")
                        and not (f.location.path or "").endswith(".py")), None)
    device_limits = {f.location.path for f in findings if f.code in DEVICE_CODES and limits(f)}
    mac: dict[str, str] = {}
    for e in entries:
        # the selection nearest the entry decides: a program whose own file names a CUDA (or CUDA-or-CPU) device and
        # chooses no MPS itself keeps its own device, whatever the modules it imports choose
        own = _entry_choice({e}, findings, results, sources, offers)
        if own is None and e in device_limits:
            continue
        where = own or _entry_choice(reach[e], findings, results, sources, offers)
        if where is None and config_flag and not (reach[e] & device_limits):
            where = f"its device is a config value: {config_flag}"
        if where is not None:
            mac[e] = where
    # a web UI (a script that imports gradio or streamlit) is an optional part beside the main work (the issue's
    # item 3): one whose own selection picks no MPS stays an entry (its limits become its own part) but does not
    # vote against the other main entries in question 1 (issue 32, round 7)
    ui = {rel for rel in mains if rel not in mac and any(i.module.split(".")[0] in _UI_PACKAGES
                                                         for i in results[rel][0].imports)}
    mains = [rel for rel in mains if rel not in ui] or mains
    # round 9: a library module the README's code imports (no program: it runs no command) leaves the device to its
    # caller, so it does not vote unless it names a device itself; the programs among the main entries decide
    mains = [rel for rel in mains if rel in mac or results[rel][0].entry or rel in device_limits] or mains
    main_mac = [e for e in mains if e in mac]
    if 2 * len(main_mac) <= len(mains):  # MPS is the project's selection only when most of its main entries pick it
        return findings, _undecided(findings, main_mac)
    out: list[Finding] = []
    others: dict[str, int] = {}
    cpu: list[str] = []
    for f in findings:
        path = f.location.path or ""
        hit = [e for e in entries if path in reach[e]] if path.endswith(".py") and limits(f) else []
        if hit and not any(e in mac for e in hit):
            why = f"reached only from {', '.join(hit[:3])}, whose device selection picks no MPS; the Mac path " \
                  f"starts at {', '.join(main_mac[:3])}"
            f = f.with_state(reach="off_main_path", entries=hit[:5]).with_evidence({**f.evidence, "other_entries": why})
            for e in hit:
                others[e] = others.get(e, 0) + 1
        elif hit and f.code == "API104" and path not in entries and all(e in mac for e in hit) \
                and not f.evidence.get("flag"):  # a choice a flag resolves is the selection itself
            why = f"a secondary selection: {', '.join(hit[:3])} put the work on MPS ({mac[hit[0]]}); the part this " \
                  "choice feeds runs on the Mac's CPU, slower but correct"
            f = replace(f, severity=Severity.INFO).with_evidence({**f.evidence, "secondary_cpu": why})
            cpu.append(f"{path}:{f.location.line}")
        out.append(f)
    return out, {"answer": "mps", "entries": main_mac, "where": mac[main_mac[0]],
                 "other_entries": [f"{e} ({n} limit(s))" for e, n in sorted(others.items())], "secondary_cpu": cpu}


def _sub_command(f: Finding, split: Mapping[str, str]) -> Finding:
    """A flag found in a sub-command's module is given to that sub-command's command line (``moge infer --device
    mps``), as a console-script module's is (round 9)."""
    run = split.get(f.location.path or "")
    ev = f.evidence or {}
    if run and ev.get("flag") and not ev.get("console_script"):
        return f.with_evidence({**ev, "console_script": run})
    return f


def _unset_flag(f: Finding, entries: list[str], reach: Mapping[str, set[str]], results: Mapping[str, Any]) -> Finding:
    """A CUDA-or-CPU fallback for an unset device value (``evidence.unset_device``: ``if cfg.device: ... else:``) in
    a module whose every entry has a device option of its own (``-d/--device``): the option sets the value, so the
    selection resolves to MPS with a flag, given on each entry's command line (issue 32, round 6)."""
    path = f.location.path or ""
    if f.code != "API104" or not (f.evidence or {}).get("unset_device") or not limits(f) or (f.evidence or {}).get("flag"):
        return f
    hit = [e for e in entries if path in reach[e]]
    options = [next((s for s in results[e][0].surfaces or () if is_device_option(s) and not s.get("computed")), None)
               for e in hit]
    first = options[0] if options else None
    if first is None or any(s is None for s in options):
        return f
    return f.with_evidence({**f.evidence, "flag": flag_text(first, "mps"), "console_script": f"python {hit[0]}",
                            "unset_by": f"{hit[0]}'s {first['name']} sets {f.evidence['unset_device']}"})


def _undecided(findings: list[Finding], some: list[str]) -> dict[str, Any]:
    """Question 1's answer when most main entries pick no MPS (``some`` do): the first limiting device finding names
    it; with none, no device choice was found."""
    for code, answer in (("API104", "cpu"), ("API103", "cuda"), ("API101", "cuda")):
        f = next((f for f in findings if f.code == code and limits(f)), None)
        if f is not None:
            return {"answer": answer, "entries": some, "where": f"{f.location.path}:{f.location.line}",
                    "other_entries": [], "secondary_cpu": []}
    return {"answer": "not_found", "entries": some, "where": None, "other_entries": [], "secondary_cpu": []}


PROPOSED = " (the proposed flag)"  # how code/macenv.py states a device option the Mac's facts set to 'mps'


def proposed_flag(f: Finding) -> str | None:
    """The device flag (``--device mps``) under which the Mac-facts evaluation judged ``f`` a branch a Mac never
    takes (``evidence.mac_never.facts``: ``--device mps (the proposed flag)``), or None (issue 32, round 7)."""
    never = (f.evidence or {}).get("mac_never")
    facts = never.get("facts", ()) if isinstance(never, dict) else ()
    return next((fact.removesuffix(PROPOSED) for fact in facts if isinstance(fact, str) and fact.endswith(PROPOSED)),
                None)


def proposed_flags(findings: list[Finding]) -> list[str]:
    """The flags the Mac's command needs because the verdict assumed them: a device-selection finding on the main
    path (main scope, no off-path reach) that is no limit only because the proposed ``--device mps`` sends the
    program past its CUDA-or-CPU branch (dia2's ``if device is None: device = cuda-or-cpu`` under ``--device``
    with no default). Without the flag the Mac runs that branch, so the flag belongs on the command line."""
    out: list[str] = []
    for f in findings:
        flag = proposed_flag(f) if f.code in DEVICE_CODES else None
        if flag and f.scope is Scope.MAIN and f.reach not in OFF_PATH_REACH and flag not in out:
            out.append(flag)
    return out


def _entry_choice(files: set[str], findings: list[Finding], results: Mapping[str, Any], sources: Any,
                  offers: dict[str, str | None]) -> str | None:
    """Where the reach ``files`` of one entry chooses MPS on a Mac (the first file in sorted order), or None."""
    for f in findings:
        flag = (f.evidence or {}).get("flag") or (proposed_flag(f) if f.code in DEVICE_CODES else None)
        if flag and f.location.path in files and f.code in DEVICE_CODES:
            return f"{f.location.path}:{f.location.line} with {flag}"
    for rel in sorted(files):
        if rel not in offers:
            offers[rel] = chooses_mps(sources.text(rel), sources.tree(rel), results[rel][0].imports)
            offers[rel] = f"{rel}:{offers[rel]}" if offers[rel] else None
        if offers[rel]:
            return offers[rel]
    return None


def chooses_mps(text: str | None, tree: ast.Module | None, imports: Any = ()) -> str | None:
    """``"LINE (what)"`` of the first device choice in a source that gives MPS on a Mac (see the module doc), or None.
    A plain substring test decides whether the walk is worth it."""
    if not text or tree is None or not any(w in text for w in ("mps", "accelerator", *_CHOOSERS)):
        return None
    compared: set[int] = set()
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            compared.update(id(c) for c in (node.left, *node.comparators))
        elif isinstance(node, ast.Expr):
            docs.add(id(node.value))
    choosers = any(i.module.split(".")[0] in _CHOOSER_PACKAGES for i in imports)
    hits = []
    for node in ast.walk(tree):
        what = _choice(node, compared, docs, choosers)
        if what:  # on one line an availability test names the choice better than the value it gives
            hits.append((getattr(node, "lineno", 0), not isinstance(node, ast.Attribute), what))
    if not hits:
        return None
    line, _value, what = min(hits)
    return f"{line} ({what})"


def _choice(node: ast.AST, compared: set[int], docs: set[int], choosers: bool) -> str | None:
    if isinstance(node, ast.Attribute):
        inner = node.value
        if node.attr == "is_available" and isinstance(inner, ast.Attribute) and inner.attr == "mps":
            return "torch.backends.mps.is_available()"
        if node.attr == "current_accelerator" and isinstance(inner, ast.Attribute) and inner.attr == "accelerator":
            return "torch.accelerator.current_accelerator()"
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in compared \
            and id(node) not in docs and (node.value == "mps" or node.value.startswith("mps:")):
        return f"the device value {node.value!r}"
    elif isinstance(node, ast.keyword) and node.arg == "accelerator" and isinstance(node.value, ast.Constant) \
            and node.value.value in _LIGHTNING:
        return f"Lightning accelerator={node.value.value!r} picks MPS"
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and k.value == "accelerator" and isinstance(v, ast.Constant) \
                    and v.value in _LIGHTNING:
                return f"Lightning accelerator {v.value!r} picks MPS"
    elif isinstance(node, ast.Call) and choosers:
        name = node.func.id if isinstance(node.func, ast.Name) else \
            node.func.attr if isinstance(node.func, ast.Attribute) else None
        if name in _CHOOSERS:
            return f"{name}() picks MPS"
    return None


def headline(selection: Mapping[str, Any], verdict: str, n_limits: int) -> str:
    """The one line that says which question decided the verdict (issue 32, round 6)."""
    if not selection:
        return f"{verdict}: decided by the findings on the main path ({n_limits} limit(s))"
    if selection["answer"] == "mps":
        verb = "picks" if len(selection["entries"]) == 1 else "pick"
        head = f"question 1 (device selection): {', '.join(selection['entries'][:2])} {verb} MPS on a Mac " \
               f"({selection['where']})"
        tail = "; question 2: nothing on its path limits it" if not n_limits else \
            f"; question 2: {n_limits} limit(s) on its path"
        return f"{verdict}: {head}{tail}"
    where = f" ({selection['where']})" if selection.get("where") else ""
    what = {"cpu": "a CUDA-or-CPU choice keeps a Mac on its CPU", "cuda": "the code names a CUDA device",
            "not_found": "no device choice that picks MPS was found"}[selection["answer"]]
    some = f" (only {', '.join(selection['entries'][:2])} does)" if selection.get("entries") else ""
    return f"{verdict}: question 1 (device selection): most main entries pick no MPS{some}: {what}{where}; " \
           f"{n_limits} limit(s) on the main path"

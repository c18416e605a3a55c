"""Joins the per-file model with the project's configuration surfaces: which findings a flag or config
value fixes, which sit behind a flag that is off by default, and which config values name CUDA.

Surface kinds and the flag text printed for each (:func:`mpsready.scan.model.surfaces.flag_text`):
argparse/click/typer ``--device mps``; configurator globals ``--device=mps``; Hydra ``device=mps`` or the
Mac option of a config group (``trainer=mps``); a plain YAML config ``device: mps in configs/x.yaml``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from dataclasses import replace

from mpsready.findings import Basis, Finding, Location, Scope, Severity
from mpsready.scan.model import configs
from mpsready.scan.model.remedy import EDIT
from mpsready.scan.model.surfaces import flag_text, is_device_option
from mpsready.scan.rules import api as A
from mpsready.scan.scope import scope_of

_DEVICE_CODES = {"API103", "API104"}
_OFF = (False, None, "", 0, "none", "None", "false", "False")


def _with(f: Finding, **ev: Any) -> Finding:
    """``f`` with the facts ``ev`` added to its evidence."""
    return f.with_evidence({**f.evidence, **ev})


def apply_surfaces(findings: list[Finding], results: Mapping[str, Any], config_texts: Mapping[str, str],
                   hydra: bool) -> tuple[list[Finding], list[str]]:
    """(findings with flag remedies and flag scopes filled in, plus API121 for config values; extra flags).

    ``results`` maps a relative path to (CodeResult, cells); ``config_texts`` maps YAML paths to their text;
    ``hydra`` says whether the project runs Hydra (imports ``hydra``), which decides the override syntax.
    """
    by_file: dict[str, list[dict]] = {rel: res.surfaces for rel, (res, _c) in results.items() if res.surfaces}
    by_dest = _main_surfaces(results)
    availability = {a for res, _c in results.values() for a in getattr(res, "availability_attrs", ())}
    out: list[Finding] = []
    flagged_files: set[str] = set()
    behind_user: dict[str, int] = {}
    for f in findings:
        path, line = f.location.path, f.location.line
        user = f.evidence.get("user_flag_guard")
        if user and user not in availability and user in by_dest and all(
                not s.get("computed") for s in by_dest[user]):
            f = _unguarded(f, user, by_dest[user][0]["name"])
        surfaces = by_file.get(path or "", [])
        if f.code in _DEVICE_CODES and surfaces:
            s = _surface_at(surfaces, f.evidence.get("surface_line") or line)
            if s is not None and is_device_option(s):
                choices = s.get("choices")
                if choices and "mps" not in choices:
                    f = f.with_state(remedy={"kind": EDIT, "migrate": False})
                    f = replace(_with(f, surface=s["name"]), message=f"{f.message}; its choices {choices} leave out 'mps'",
                                fix=f"Add 'mps' to the choices of {s['name']}, then pass {flag_text(s, 'mps')}.")
                else:
                    f = _with(f, flag=flag_text(s, "mps"), surface=s["name"])
                    flagged_files.add(path or "")
        guard, test = f.evidence.get("flag_guard"), f.evidence.get("flag_test")
        # round 11: a script that declares the option itself is run with its own default (synthesize.py's
        # `--use_cuda` store_true), whatever another script of the project declares under that name (default=True)
        own = [s for s in by_dest.get(guard or "", ()) if s in surfaces]
        if guard and guard in by_dest and all(not s.get("computed") and not _default_passes(s.get("default"), test)
                                               for s in own or by_dest[guard]):
            f = f.with_state(behind_flag=by_dest[guard][0]["name"])
            if f.evidence.get("user_cuda_flag"):
                behind_user[guard] = behind_user.get(guard, 0) + 1
        out.append(f)
    out += cpu_by_user_flag(behind_user, by_dest, results)
    out += options_without_mps(by_file, out)
    out += config_findings(config_texts, hydra)
    extra: list[str] = []
    if hydra:
        extra += configs.mac_group_options(config_texts)
    extra += compile_flags(by_file, flagged_files, findings)
    extra += request_flags(by_file, results, {flag for f in out if (flag := f.evidence.get("flag"))})
    extra += [flag for flag in switch_flags(by_file, results) if flag not in extra]
    return out, extra


_GUARD_NOTE = " (inside a CUDA-availability check, so skipped on a Mac)"


def _unguarded(f: Finding, dest: str, name: str) -> Finding:
    """A finding under ``if args.cuda:`` where ``cuda`` is the user's option (a literal default, never assigned
    from ``torch.cuda``): not a CUDA-availability check (issue 23), so it keeps its own severity, and it sits
    behind that option (``flag_guard``), which the caller judges by the option's default."""
    ev = {k: v for k, v in f.evidence.items() if k not in ("guarded", "user_flag_guard", "unguarded_severity")}
    ev.update(flag_guard=dest, user_cuda_flag=name)
    message = f.message.removesuffix(_GUARD_NOTE)
    severity = Severity(f.evidence.get("unguarded_severity", f.severity.value))
    return replace(f, severity=severity, message=f"{message} (behind the option {name}, a user's flag, not a CUDA "
                   "check)").with_evidence(ev)


def cpu_by_user_flag(behind: Mapping[str, int], by_dest: Mapping[str, list[dict]],
                     results: Mapping[str, Any]) -> list[Finding]:
    """API104 at the option for each user CUDA flag off by default that device code sits behind, in a project
    whose main path never uses MPS when asked (no comparison with ``'mps'``): without the flag a Mac runs on the
    CPU, with it the program calls CUDA, so choosing MPS needs an edit."""
    if any(res.mps_on_request for rel, (res, _c) in results.items() if scope_of(rel) is Scope.MAIN):
        return []
    out = []
    for dest, n in sorted(behind.items()):
        s = by_dest[dest][0]
        path = next((rel for rel, (res, _c) in results.items() if s in (res.surfaces or ())), None)
        if path is None:
            continue
        out.append(Finding(
            A.DEVICE_SELECTION.code, A.DEVICE_SELECTION.severity,
            f"the device is chosen only by the option {s['name']} (off by default; {n} device call(s) behind it): "
            "on a Mac the program runs on the CPU, never on MPS", Location(path, s["line"]), Basis.PREDICTED,
            A.DEVICE_SELECTION.fix, A.DEVICE_SELECTION.source, scope_of(path), {"option": s["name"], "behind": n}))
    return out


def options_without_mps(by_file: Mapping[str, list[dict]], findings: list[Finding]) -> list[Finding]:
    """API104 at a device option whose value reaches a device (``torch.device``, ``.to()``, ``device=``) and whose
    allowed values leave out ``'mps'`` (argparse ``choices``, an absl enum, or a list the program validates it
    against: ``if device not in ['cpu', 'cuda']: raise``), and whose default is not
    a CUDA device: a Mac runs on the CPU, and ``--device mps`` is rejected, so choosing MPS is an edit (add it to
    the allowed values), never a flag. A CUDA default gets its own API103 with that edit."""
    seen = {(f.location.path, f.evidence.get("surface_line") or f.location.line) for f in findings
            if f.code in _DEVICE_CODES}
    out = []
    for rel, surfaces in sorted(by_file.items()):
        for s in surfaces:
            choices, default = s.get("choices"), s.get("default")
            if not choices or "mps" in choices or not is_device_option(s) or not s.get("flows") \
                    or (rel, s["line"]) in seen:
                continue  # only an option whose value reaches torch.device, .to() or device=: the program's device
            if isinstance(default, str) and default.split(":")[0].lower() == "cuda":
                continue
            how = "validated against" if s.get("validated") else "limited to"
            out.append(replace(Finding(
                A.DEVICE_SELECTION.code, A.DEVICE_SELECTION.severity,
                f"device option {s['name']} is {how} {choices} (default {default!r}): on a Mac the program runs on the "
                f"CPU, and {flag_text(s, 'mps')} is rejected", Location(rel, s["line"]), Basis.PREDICTED,
                f"Add 'mps' to the values {s['name']} accepts, then pass {flag_text(s, 'mps')}.",
                A.DEVICE_SELECTION.source, scope_of(rel), {"option": s["name"], "choices": list(choices)}),
            ).with_state(remedy={"kind": EDIT, "migrate": False}))
    return out


def _main_surfaces(results: Mapping[str, Any]) -> dict[str, list[dict]]:
    """The configuration surfaces of main-scope files by destination (``word_timestamps`` -> its options)."""
    by_dest: dict[str, list[dict]] = {}
    for rel, (res, _c) in results.items():
        if res.surfaces and scope_of(rel) is Scope.MAIN:
            for s in res.surfaces:
                by_dest.setdefault(s["dest"], []).append(s)
    return by_dest


def off_options(results: Mapping[str, Any]) -> dict[str, str]:
    """The main path's options that are off by default: destination -> printed name (``--word_timestamps``)."""
    out: dict[str, str] = {}
    for dest, surfaces in _main_surfaces(results).items():
        name = next((s["name"] for s in surfaces if not s.get("computed") and not _default_passes(s.get("default"), None)),
                    None)
        if name is not None:
            out[dest] = name
    return out


def request_flags(by_file: Mapping[str, list[dict]], results: Mapping[str, Any], flags: set[str]) -> list[str]:
    """``--device mps`` for a main-path device option that keeps a Mac on the CPU unless it is given: its default
    is ``"cpu"``, or empty (``""``/``None``) in a project that uses MPS only when a value equals ``'mps'``
    (yolov5's ``select_device``: ``--device ""`` means CUDA if available, else the CPU). Such a project raises no
    device finding (it is MPS-aware), yet without the flag it runs on the CPU."""
    asks = any(res.mps_on_request for rel, (res, _c) in results.items() if scope_of(rel) is Scope.MAIN)
    out: list[str] = []
    for rel, surfaces in sorted(by_file.items()):
        if scope_of(rel) is not Scope.MAIN:
            continue
        for s in surfaces:
            default, choices = s.get("default"), s.get("choices")
            if not is_device_option(s) or s.get("computed") or (choices and "mps" not in choices):
                continue
            # a CUDA default of an option that names no device (`--where cuda` into torch.device) raised no API103
            cuda_default = isinstance(default, str) and default.split(":")[0].lower() == "cuda"
            if default == "cpu" or cuda_default or (asks and default in ("", None)):
                flag = flag_text(s, "mps")
                if flag not in flags and flag not in out:
                    out.append(flag)
    return out


def switch_flags(by_file: Mapping[str, list[dict]], results: Mapping[str, Any]) -> list[str]:
    """``--apple_silicon`` for a main-path store_true option (off by default) whose value selects MPS in its own file
    (``if apple_silicon: device = torch.device("mps")``, :func:`mpsready.scan.code.summaries.mps_switches`): without it
    the program takes its other branch on a Mac (CUDA if available, else the CPU), so the Mac's command line names
    it (issue 32: the good news said plainly)."""
    out: list[str] = []
    for rel, surfaces in sorted(by_file.items()):
        switches = set(getattr(results[rel][0], "mps_switches", ()) or ()) if rel in results else set()
        if not switches or scope_of(rel) is not Scope.MAIN:
            continue
        for s in surfaces:
            if s.get("action") == "store_true" and s["dest"] in switches and s["name"] not in out:
                out.append(s["name"])
    return out


def _default_passes(default: Any, test: list | None) -> bool:
    """Whether an option's default takes the guarded branch: truthy for ``if args.x:``; for a test on its value
    (``["in", "fused"]``, ``["eq", "lamb"]``) the default string compared without case. An unknown default
    (not a string) passes, so the finding keeps limiting."""
    if not test:
        return default not in _OFF
    if not isinstance(default, str):
        return True
    op, value = test
    return value.lower() in default.lower() if op == "in" else value.lower() == default.lower()


def _surface_at(surfaces: Iterable[dict], line: int | None) -> dict | None:
    if line is None:
        return None
    return next((s for s in surfaces if s["line"] <= line <= s.get("last", s["line"])), None)


def compile_flags(by_file: Mapping[str, list[dict]], flagged: set[str], findings: list[Finding]) -> list[str]:
    """`--compile=False` / `--compile False` for a script whose device is already set by a flag and whose compile
    switch is on by default while the project calls torch.compile (API114): Inductor's MPS backend depends on the
    PyTorch version (PyTorch 2.13.0 torch/_inductor/codegen/mps.py), eager mode always runs."""
    if not any(f.code == "API114" and f.scope is Scope.MAIN for f in findings):
        return []
    out = []
    for rel in sorted(flagged):
        for s in by_file.get(rel, []):
            if "compile" in s["dest"].lower() and s.get("default") is True and s.get("action") != "store_true":
                out.append(flag_text(s, False))
    return out


def config_findings(config_texts: Mapping[str, str], hydra: bool) -> list[Finding]:
    """API121 for each config value that names a CUDA device, with its override as the flag."""
    out = []
    for v in configs.cuda_values(dict(config_texts), hydra):
        flag = v["override"] or f"{v['key']}: mps in {v['path']}"
        out.append(Finding(A.CONFIG_CUDA_DEVICE.code, A.CONFIG_CUDA_DEVICE.severity,
                           f"config value {v['key']}: {v['value']!r} names a CUDA device", Location(v["path"], v["line"]),
                           Basis.PREDICTED, f"Override it on the Mac: {flag}.", A.CONFIG_CUDA_DEVICE.source,
                           scope_of(v["path"]), {"key": v["key"], "value": v["value"], "flag": flag}))
    return out


def cpu_only_dtypes(findings: list[Finding], results: Mapping[str, Any]) -> list[Finding]:
    """A project that never places anything on a device (no `.to(`, `.cuda(`, `device=` anywhere) runs its scripts
    and notebooks on the CPU on a Mac as on Linux, where float64 and complex work: DTY101/DTY104 blockers in
    those entry files become info. Library modules keep them (their users move the models to a device)."""
    if any(res.places for res, _c in results.values()):
        return findings
    out = []
    for f in findings:
        path = f.location.path or ""
        entry = path.endswith(".ipynb") or (path in results and results[path][0].entry)
        if f.code in ("DTY101", "DTY104") and f.severity is Severity.BLOCKER and entry:
            f = replace(f, severity=Severity.INFO, message=f"{f.message} (nothing in the project is placed on a device: "
                        "it runs on the CPU, where this dtype works)").with_evidence({**f.evidence, "cpu_only": True})
        out.append(f)
    return out
